package plan

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/toolhost/toolhost/events"
)

// Regression (issue 10 finding 8): plan events reach the bus with the
// session's caller and, unless the bus keeps values, without step
// arguments or results; the session's own log keeps them.
func TestBusEventsRedactedAndCarryCaller(t *testing.T) {
	const secret = "hmac-key-0000"
	for _, values := range []bool{false, true} {
		bus := events.New(events.Options{Values: values})
		sub := bus.Subscribe(64)
		res := runSession(t, &fakeDispatcher{}, Static([]Step{st(1, "sign", `{"key":"`+secret+`"}`)}), "g", Limits{},
			func(c *Config) {
				c.Bus = bus
				c.Options.Caller = "alice"
			})
		sub.Close()
		var streamed strings.Builder
		n := 0
		for e := range sub.C {
			if e.Caller != "alice" {
				t.Errorf("%s has caller %q, want alice", e.Type, e.Caller)
			}
			b, _ := json.Marshal(e)
			streamed.Write(b)
			n++
		}
		if n != len(res.Events) {
			t.Fatalf("values=%v: %d bus events, want %d", values, n, len(res.Events))
		}
		if got := strings.Contains(streamed.String(), secret); got != values {
			t.Errorf("values=%v: the bus carried the argument: %v", values, got)
		}
		if got := strings.Contains(streamed.String(), `"result"`); got != values {
			t.Errorf("values=%v: the bus carried a result: %v", values, got)
		}
		log, _ := json.Marshal(res.Events)
		if !strings.Contains(string(log), secret) {
			t.Errorf("the session's own log lost the arguments")
		}
	}
}

// Redacted does not modify the event it copies (the session's log shares
// its slices).
func TestRedactedCopies(t *testing.T) {
	e := Event{Kind: EventPlanDiff, Steps: []Step{st(1, "t", `{"a":1}`)}, Args: json.RawMessage(`{}`), Result: json.RawMessage(`1`)}
	r := e.Redacted().(Event)
	if r.Args != nil || r.Result != nil || r.Steps[0].Args != nil || r.Steps[0].ToolName != "t" {
		t.Errorf("redacted %+v", r)
	}
	if e.Args == nil || e.Result == nil || e.Steps[0].Args == nil {
		t.Errorf("the original changed: %+v", e)
	}
}
