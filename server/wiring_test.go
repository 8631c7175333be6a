package server

import (
	"reflect"
	"testing"
	"time"

	"github.com/toolhost/toolhost/breaker"
	"github.com/toolhost/toolhost/dispatcher"
	"github.com/toolhost/toolhost/host"
	"github.com/toolhost/toolhost/internal/config"
	"github.com/toolhost/toolhost/loader"
)

const wiringFile = `[dispatch]
concurrency = 8
global_concurrency = 64
queue_timeout = "30s"
idempotency_ttl = "60s"

[breaker]
failures = 5
window = "30s"
cooldown = "30s"
jitter = 0.25
probes = 2

[tools."db.write"]
timeout = "5s"
idempotent = false
read_only = false
concurrency = 2
memory = "32MiB"
output = "256KiB"
  [tools."db.write".breaker]
  failures = 3
  cooldown = "1m"
  jitter = 0

[tools]
"text.upper" = { timeout = "250ms", read_only = true, log = "4KB" }
'math.add' = { idempotent = true }
`

func parseConfig(t *testing.T, src string) *config.Config {
	t.Helper()
	c, err := config.Parse("toolhost.toml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func ptr[T any](v T) *T { return &v }

func TestToolOverrides(t *testing.T) {
	c := parseConfig(t, wiringFile)
	want := map[string]loader.Override{
		"db.write":   {Timeout: 5 * time.Second, Idempotent: ptr(false), ReadOnly: ptr(false), Limits: host.Limits{MemoryBytes: 32 << 20, OutputBytes: 256 << 10}},
		"text.upper": {Timeout: 250 * time.Millisecond, ReadOnly: ptr(true), Limits: host.Limits{LogBytes: 4000}},
		"math.add":   {Idempotent: ptr(true)},
	}
	if got := toolOverrides(c); !reflect.DeepEqual(got, want) {
		t.Errorf("toolOverrides:\n got %+v\nwant %+v", got, want)
	}
	if toolOverrides(nil) != nil {
		t.Error("a nil Config overrides tools")
	}
}

func TestDispatcherConfig(t *testing.T) {
	c := parseConfig(t, wiringFile)
	d := dispatcherConfig(c)
	if d.Concurrency != 8 || d.GlobalConcurrency != 64 || d.QueueTimeout != 30*time.Second || d.IdempotencyTTL != time.Minute {
		t.Errorf("dispatch fields = %d %d %v %v", d.Concurrency, d.GlobalConcurrency, d.QueueTimeout, d.IdempotencyTTL)
	}
	if want := (breaker.Settings{Failures: 5, Window: 30 * time.Second, Cooldown: 30 * time.Second, Jitter: 0.25, Probes: 2}); d.Breaker != want {
		t.Errorf("Breaker = %+v, want %+v", d.Breaker, want)
	}
	wantTools := map[string]dispatcher.ToolPolicy{
		// jitter = 0 is "none".
		"db.write": {Concurrency: 2, Breaker: breaker.Settings{Failures: 3, Cooldown: time.Minute, Jitter: -1}},
		// text.upper and math.add set neither concurrency nor breaker.
	}
	if !reflect.DeepEqual(d.Tools, wantTools) {
		t.Errorf("Tools:\n got %+v\nwant %+v", d.Tools, wantTools)
	}
	d.Tools["db.write"] = dispatcher.ToolPolicy{}
	if dispatcherConfig(c).Tools["db.write"].Concurrency != 2 {
		t.Error("a caller's change to the Tools map reached the next config")
	}
}

func TestDispatcherConfigEmptyAndPartial(t *testing.T) {
	for _, src := range []string{"", "# nothing\n", "\n\n[dispatch]\n", "[tools]\n", "[tools.a]\ntimeout = \"1s\"\n"} {
		if d := dispatcherConfig(parseConfig(t, src)); !reflect.DeepEqual(d, dispatcher.Config{}) {
			t.Errorf("%q set dispatcher fields: %+v", src, d)
		}
	}
	if d := dispatcherConfig(nil); !reflect.DeepEqual(d, dispatcher.Config{}) {
		t.Errorf("a nil Config set dispatcher fields: %+v", d)
	}

	// Only what is set is set.
	d := dispatcherConfig(parseConfig(t, "[breaker]\njitter = 0\n[tools.a.breaker]\nprobes = 3\n"))
	if want := (breaker.Settings{Jitter: -1}); d.Breaker != want {
		t.Errorf("Breaker = %+v, want %+v", d.Breaker, want)
	}
	if want := map[string]dispatcher.ToolPolicy{"a": {Breaker: breaker.Settings{Probes: 3}}}; !reflect.DeepEqual(d.Tools, want) {
		t.Errorf("Tools = %+v, want %+v", d.Tools, want)
	}
}

// A zero or false the file gives is not the key left out: each reaches its
// layer as that value, where the layer would read a plain zero as "the
// default" (the bug the throttle_reserve = 0 fix was about).
func TestExplicitZeroReachesTheLayer(t *testing.T) {
	tests := []struct {
		name        string
		set, absent string
		got         func(*config.Config) any
		want        any // what set gives; absent must give something else
	}{
		{"breaker.jitter", "[breaker]\njitter = 0\n", "[breaker]\n",
			func(c *config.Config) any {
				return breaker.New(dispatcherConfig(c).Breaker, breaker.Options{}).Settings().Jitter
			}, -1.0},
		{"tools.t.breaker.jitter", "[tools.t.breaker]\njitter = 0\n", "[tools.t.breaker]\nprobes = 1\n",
			func(c *config.Config) any {
				d := dispatcherConfig(c)
				d.Breaker.Jitter = 0.5
				per := map[string]breaker.Settings{"t": d.Tools["t"].Breaker}
				return breaker.NewSet(d.Breaker, per, breaker.SetOptions{}).For("t").Settings().Jitter
			}, -1.0},
		{"tools.t.idempotent", "[tools.t]\nidempotent = false\n", "[tools.t]\n",
			func(c *config.Config) any { return toolOverrides(c)["t"].Idempotent }, ptr(false)},
		{"tools.t.read_only", "[tools.t]\nread_only = false\n", "[tools.t]\n",
			func(c *config.Config) any { return toolOverrides(c)["t"].ReadOnly }, ptr(false)},
		{"tools.t.expose", "[tools.t]\nexpose = false\n", "[tools.t]\n",
			func(c *config.Config) any { return toolOverrides(c)["t"].Expose }, ptr(false)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			set, absent := tt.got(parseConfig(t, tt.set)), tt.got(parseConfig(t, tt.absent))
			if !reflect.DeepEqual(set, tt.want) {
				t.Errorf("%q: the layer runs with %v, want %v", tt.set, show(set), show(tt.want))
			}
			if reflect.DeepEqual(set, absent) {
				t.Errorf("%q and %q both give the layer %v", tt.set, tt.absent, show(set))
			}
		})
	}
}

// show prints a *bool's value rather than its address.
func show(v any) any {
	if p, ok := v.(*bool); ok && p != nil {
		return *p
	}
	return v
}
