package config

import (
	"testing"

	"github.com/toolhost/toolhost/breaker"
	"github.com/toolhost/toolhost/governor"
)

// The keys that accept 0 mean "none" by it, where the layer they fill
// reads a plain 0 as "the default": the checker must write the layer's
// "none", so that the key set to 0 and the key left out differ once the
// layer has applied its defaults (throttle_reserve = 0 was once 0.5).
func TestExplicitZeroIsNotAbsent(t *testing.T) {
	gov := func(t *testing.T, c *Config) float64 {
		g, err := governor.New(c.GovernorConfig())
		if err != nil {
			t.Fatal(err)
		}
		defer g.Close()
		return g.Config().ThrottleReserve
	}
	tests := []struct {
		name        string
		set, absent string
		got         func(*testing.T, *Config) float64
		want        float64 // with the key set to 0
	}{
		{"governor.throttle_reserve", "[governor]\nthrottle_reserve = 0\n", "[governor]\n", gov, 0},
		{"breaker.jitter", "[breaker]\njitter = 0\n", "[breaker]\n",
			func(t *testing.T, c *Config) float64 {
				return breaker.New(c.Breaker, breaker.Options{}).Settings().Jitter
			}, -1},
		{"tools.t.breaker.jitter", "[tools.t.breaker]\njitter = 0\n", "[tools.t.breaker]\nprobes = 1\n",
			func(t *testing.T, c *Config) float64 {
				return breaker.New(c.Tools["t"].Breaker, breaker.Options{}).Settings().Jitter
			}, -1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			set, err := Parse("x.toml", []byte(tt.set))
			if err != nil {
				t.Fatal(err)
			}
			absent, err := Parse("x.toml", []byte(tt.absent))
			if err != nil {
				t.Fatal(err)
			}
			s, a := tt.got(t, set), tt.got(t, absent)
			if s != tt.want {
				t.Errorf("%q: the layer runs with %v, want %v", tt.set, s, tt.want)
			}
			if s == a {
				t.Errorf("%q and %q both give the layer %v", tt.set, tt.absent, s)
			}
		})
	}
}
