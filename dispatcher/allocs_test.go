package dispatcher

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/toolhost/toolhost/events"
)

// allocBudget is what a no-key call through the dispatcher may allocate
// (issue 26: at most 8), handler's result included: the per-attempt
// timeout's context (4: its context, timer, timer function and cancel
// function), the attempt's Stats (1) and noop's result (1). Arguments {}
// have their verdict taken at load; other arguments are decoded (one
// json.Decoder, the value) and validated (jsonschema's own 4).
// The counts are exact and deterministic: raising one is a decision,
// to be made here, with docs/BENCHMARKS.md.
var allocBudget = []struct {
	name   string
	args   string
	events bool // a bus with one subscriber (the metrics' shape), drained
	max    float64
}{
	{"no-key {}", `{}`, false, 6},
	{"no-key no args", ``, false, 6},
	{"no-key with args", `{"text":"hello, world","n":3}`, false, 22},
	// Events are built and published only when someone listens: an
	// attempt and a result event per call, each payload boxed once (the
	// events.Event that carries it goes by value).
	{"no-key {} with events", `{}`, true, 8},
}

// TestAllocBudget pins the allocations of a no-key call, so that the next
// change that adds one fails here, where it happens, rather than in an
// end-to-end benchmark nobody reruns.
func TestAllocBudget(t *testing.T) {
	for _, c := range allocBudget {
		t.Run(c.name, func(t *testing.T) {
			var cfg Config
			var sub *events.Subscription
			if c.events {
				cfg.Events = events.New(events.Options{})
				sub = cfg.Events.Subscribe(16)
				defer sub.Close()
			}
			d := New(newRegistry(t, toolSpec{name: "noop", handler: noop}), cfg)
			call := Call{Tool: "noop", Args: json.RawMessage(c.args)}
			ctx := context.Background()
			published := 0
			n := testing.AllocsPerRun(200, func() {
				if _, err := d.Call(ctx, call); err != nil {
					t.Fatal(err)
				}
				if sub != nil {
					for range 2 {
						e := <-sub.C
						if e.Type == EventAttempt || e.Type == EventResult {
							published++
						}
					}
				}
			})
			if n > c.max {
				t.Fatalf("%v allocations per call, budget %v (see allocBudget)", n, c.max)
			}
			if c.events && published != 2*201 {
				t.Fatalf("%d attempt and result events for 201 calls, want %d", published, 2*201)
			}
			t.Logf("%v allocations per call (budget %v)", n, c.max)
		})
	}
}
