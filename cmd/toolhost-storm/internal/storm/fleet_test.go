package storm

import (
	"testing"
	"time"

	"github.com/toolhost/toolhost/internal/config"
)

// The config the fleet's replicas run the storm with is one serve
// accepts, with the quota and grant the single-process arm uses.
func TestFleetConfigParses(t *testing.T) {
	c, err := config.Parse("fleet.toml", []byte(FleetConfig(Options{}, 3)))
	if err != nil {
		t.Fatal(err)
	}
	o := Options{}.withDefaults()
	q := c.GovernorConfig().Quotas
	if len(q) != 1 || q[0].Capacity != o.governorPer100s() || q[0].Interval != 100*time.Second || q[0].Burst != int64(o.Burst-o.Headroom) {
		t.Fatalf("quotas %+v, want the storm's (%d per 100s, burst %d)", q, o.governorPer100s(), o.Burst-o.Headroom)
	}
	if _, ok := c.EgressGrants()["egress.wasm"]; !ok {
		t.Fatal("no grant for egress.wasm")
	}
}
