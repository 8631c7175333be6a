package plan

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/toolhost/toolhost/dispatcher"
	"github.com/toolhost/toolhost/events"
)

func TestPlannerFailures(t *testing.T) {
	t.Run("error", func(t *testing.T) {
		p := PlannerFunc(func(context.Context, Input) ([]Step, error) { return nil, errors.New("model unavailable") })
		res := runSession(t, &fakeDispatcher{}, p, "g", Limits{}, nil)
		if res.Reason != ReasonFatal || !errors.Is(res.Error, ErrPlanner) || !strings.Contains(res.Message, "model unavailable") {
			t.Fatalf("%s (%s): %v %s", res.Status, res.Reason, res.Error, res.Message)
		}
		if k := res.Events[len(res.Events)-2].Kind; k != EventPlanError {
			t.Errorf("planner failure logged as %s", k)
		}
	})
	t.Run("timeout", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			p := PlannerFunc(func(ctx context.Context, _ Input) ([]Step, error) {
				<-ctx.Done()
				return nil, ctx.Err()
			})
			res := runSession(t, &fakeDispatcher{}, p, "g", Limits{}, func(c *Config) { c.PlannerTimeout = time.Second })
			if res.Reason != ReasonFatal || !strings.Contains(res.Error.Message, "did not answer within 1s") {
				t.Fatalf("%s (%s): %v", res.Status, res.Reason, res.Error)
			}
		})
	})
	t.Run("no plan for the goal", func(t *testing.T) {
		res := runSession(t, &fakeDispatcher{}, Static(nil), "g", Limits{}, nil)
		if res.Reason != ReasonNoPlan || res.Error != nil || res.Replans != 0 {
			t.Fatalf("%s (%s): %v, %d replans", res.Status, res.Reason, res.Error, res.Replans)
		}
	})
	t.Run("arguments that are not JSON", func(t *testing.T) {
		// A Go planner can return anything; the rejected plan must still
		// be loggable.
		p := &script{plans: [][]Step{{{ID: 1, ToolName: "t", Args: json.RawMessage(`{oops`)}}}}
		res := runSession(t, &fakeDispatcher{}, p, "g", Limits{}, nil)
		rej := res.Events[1]
		if rej.Kind != EventPlanRejected || string(rej.Steps[0].Args) != `"{oops"` {
			t.Fatalf("rejection %+v", rej)
		}
		if _, err := json.Marshal(res); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("invalid plans until the budget runs out", func(t *testing.T) {
		bad := []Step{st(1, "t", `{"x":{"$ref":"/steps/1/result"}}`)}
		p := &script{plans: [][]Step{bad, bad, bad}}
		res := runSession(t, &fakeDispatcher{}, p, "g", Limits{MaxReplans: 2}, nil)
		if res.Reason != ReasonReplanBudget || res.Replans != 2 || !errors.Is(res.Error, ErrInvalidPlan) || len(p.seen) != 3 {
			t.Fatalf("%s (%s) after %d planner calls: %v", res.Status, res.Reason, len(p.seen), res.Error)
		}
	})
}

// TestStepFailures covers what a dispatcher can return besides a
// DispatchError or JSON.
func TestStepFailures(t *testing.T) {
	plain := dispatchFunc(func(context.Context, dispatcher.Call) (json.RawMessage, error) {
		return nil, errors.New("connection reset")
	})
	res := runSession(t, plain, Static([]Step{st(1, "t", `{}`)}), "g", Limits{}, nil)
	if res.Reason != ReasonNoPlan || res.History[0].Error.Kind != "internal" || res.History[0].Error.Message != "connection reset" {
		t.Errorf("plain error: %+v", res.History)
	}
	text := dispatchFunc(func(context.Context, dispatcher.Call) (json.RawMessage, error) {
		return json.RawMessage(`not json`), nil
	})
	res = runSession(t, text, Static([]Step{st(1, "t", `{}`)}), "g", Limits{}, nil)
	if h := res.History[0]; h.Error == nil || !strings.Contains(h.Error.Message, "not JSON") {
		t.Errorf("non-JSON result: %+v", h)
	}
	empty := dispatchFunc(func(context.Context, dispatcher.Call) (json.RawMessage, error) { return nil, nil })
	res = runSession(t, empty, Static([]Step{st(1, "t", `{}`)}), "g", Limits{}, nil)
	if h := res.History[0]; h.Error != nil || string(h.Result) != "null" {
		t.Errorf("empty result: %+v", h)
	}
}

type dispatchFunc func(context.Context, dispatcher.Call) (json.RawMessage, error)

func (f dispatchFunc) Call(ctx context.Context, c dispatcher.Call) (json.RawMessage, error) {
	return f(ctx, c)
}

func TestDispatchOptions(t *testing.T) {
	budget := 2
	var got []dispatcher.Call
	d := dispatchFunc(func(_ context.Context, c dispatcher.Call) (json.RawMessage, error) {
		got = append(got, c)
		return json.RawMessage(`{}`), nil
	})
	opts := dispatcher.Options{Timeout: time.Second, Budget: &budget, Priority: "background", Caller: "me", IdempotencyKey: "ignored"}
	runSession(t, d, Static([]Step{st(1, "t", `{"b":1,"a":2}`)}), "g", Limits{}, func(c *Config) { c.Options = opts })
	if len(got) != 1 {
		t.Fatalf("%d calls", len(got))
	}
	c := got[0]
	if c.Timeout != time.Second || c.Budget != &budget || c.Priority != "background" || c.Caller != "me" {
		t.Errorf("options not passed on: %+v", c.Options)
	}
	if c.IdempotencyKey != Key("s1", 1, "t", json.RawMessage(`{"a":2,"b":1}`)) || string(c.Args) != `{"a":2,"b":1}` {
		t.Errorf("call %s with key %q", c.Args, c.IdempotencyKey)
	}
}

func TestNotReusable(t *testing.T) {
	d := &fakeDispatcher{}
	steps := []Step{st(1, "write.x", `{}`), st(2, "write.x", `{}`), st(3, "text.count", `{}`), st(4, "text.count", `{}`)}
	res := runSession(t, d, Static(steps), "g", Limits{}, nil)
	if res.Status != StatusCompleted || d.callCount() != 3 || res.History[3].ReusedFrom != 3 {
		t.Fatalf("%d calls, history %+v", d.callCount(), res.History)
	}
	d = &fakeDispatcher{}
	res = runSession(t, d, Static(steps), "g", Limits{}, func(c *Config) { c.Reusable = nil })
	if d.callCount() != 4 {
		t.Fatalf("with no Reusable, %d calls; want every step run", d.callCount())
	}
}

func TestSessionID(t *testing.T) {
	e := New(Config{Dispatcher: &fakeDispatcher{}, Planner: Static(nil)})
	if _, err := e.Run(context.Background(), Session{ID: "a:b"}); err == nil {
		t.Error("a session id with a colon was accepted")
	}
	a, _ := e.Run(context.Background(), Session{Goal: "g"})
	b, _ := e.Run(context.Background(), Session{Goal: "g"})
	if !ValidSessionID(a.SessionID) || a.SessionID == b.SessionID {
		t.Errorf("random session ids %q and %q", a.SessionID, b.SessionID)
	}
	if a.Events[0].Time.IsZero() {
		t.Error("events are not stamped by default")
	}
}

func TestNewPanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("New accepted a Config without a planner")
		}
	}()
	New(Config{Dispatcher: &fakeDispatcher{}})
}

// TestBus checks that events reach the bus with their kind as type and
// the session's id on every one, while the log names it at the start only.
func TestBus(t *testing.T) {
	bus := events.NewBus(nil)
	sub := bus.Subscribe(64, "plan.", "step.", "session.")
	defer sub.Close()
	res := runSession(t, &fakeDispatcher{}, Static([]Step{st(1, "t", `{}`)}), "g", Limits{}, func(c *Config) { c.Bus = bus })
	for i, want := range res.Events {
		got := <-sub.C
		e, ok := got.Data.(Event)
		if got.Type != string(want.Kind) || !ok || e.Seq != want.Seq || e.SessionID != res.SessionID {
			t.Fatalf("bus event %d: %s %+v, want %s seq %d of session %s", i, got.Type, got.Data, want.Kind, want.Seq, res.SessionID)
		}
		if i > 0 && want.SessionID != "" {
			t.Fatalf("log event %d (%s) names the session: %+v", i, want.Kind, want)
		}
	}
}

func TestFoldPrefix(t *testing.T) {
	res := runSession(t, &fakeDispatcher{}, Rules(), "a b", Limits{}, nil)
	mid := Fold(res.Events[:4])
	if mid.Status != StatusRunning || mid.Reason != "" || len(mid.History) != 1 || mid.StepsExecuted != 1 {
		t.Errorf("fold of a prefix: %s, %d steps executed, history %+v", mid.Status, mid.StepsExecuted, mid.History)
	}
	if empty := Fold(nil); empty.Status != StatusRunning || empty.History == nil {
		t.Errorf("fold of nothing: %+v", empty)
	}
}

func TestErrorIs(t *testing.T) {
	err := error(&Error{Kind: KindInvalidPlan, Message: "m", StepID: 3})
	if !errors.Is(err, ErrInvalidPlan) || errors.Is(err, ErrPlanner) {
		t.Error("errors.Is does not match by kind")
	}
	if err.Error() != "step 3: invalid_plan: m" {
		t.Errorf("Error() = %q", err)
	}
	if !ErrorKind(dispatcher.KindBudgetExceeded).Fatal() || ErrorKind(dispatcher.KindTimeout).Fatal() || KindInvalidPlan.Fatal() {
		t.Error("only budget_exceeded is fatal")
	}
}
