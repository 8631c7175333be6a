package dispatcher

import (
	"context"
	"log/slog"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/toolhost/toolhost/abi"
	"github.com/toolhost/toolhost/breaker"
	"github.com/toolhost/toolhost/events"
)

var askUser = &abi.InputRequest{State: "s", Requests: map[string]abi.InputQuestion{
	"confirm": {Mode: abi.InputForm, Message: "Sure?", Schema: []byte(`{"type":"object"}`)}}}

// An input request is the call's answer: one attempt, no retry even for
// an idempotent tool, not an error, and never counted by the breaker,
// however often it comes (a breaker of one failure stays closed). Its
// result event says so.
func TestInputRequestIsNoFailure(t *testing.T) {
	f := &fakeTool{script: []step{{err: askUser}}}
	bus := events.NewBus(slog.New(slog.DiscardHandler))
	got := subscribe(t, bus)
	d := New(newRegistry(t, toolSpec{name: "t", idempotent: true, handler: f}),
		Config{Breaker: breaker.Settings{Failures: 1}, Events: bus})
	for i := range 5 {
		o := d.Do(context.Background(), Call{Tool: "t"})
		if o.Err != nil || o.Input != askUser || o.Attempts != 1 || o.Result != nil {
			t.Fatalf("call %d: %+v; want the input request after one attempt", i, o)
		}
	}
	if f.calls.Load() != 5 {
		t.Errorf("the tool ran %d times for 5 calls; want no retries", f.calls.Load())
	}
	if st := d.breakers.For("t").State(); st != breaker.Closed {
		t.Errorf("breaker %v after 5 input requests; want closed", st)
	}
	var results int
	for _, e := range got() {
		if r, ok := e.Data.(ResultEvent); ok {
			results++
			if !r.OK || !r.InputRequired || r.Kind != "" {
				t.Errorf("result event %+v", r)
			}
		}
		if e.Type == EventRetry {
			t.Errorf("a retry event: %+v", e)
		}
	}
	if results != 5 {
		t.Errorf("%d result events, want 5", results)
	}
}

// An idempotency key covers the whole exchange: the call that asks keeps
// nothing under the key, so the call that brings the answers runs, and
// its final result is what the key replays from then on.
func TestInputRequestKeyReplaysTheFinalResult(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := &fakeTool{script: []step{{err: askUser}, {result: `{"deleted":true}`}}}
		d := New(newRegistry(t, toolSpec{name: "t", handler: f}), Config{})
		c := keyedCall("k", `{"path":"/x"}`)
		if o := d.Do(context.Background(), c); o.Input == nil || o.Err != nil {
			t.Fatalf("first call: %+v; want the input request", o)
		}
		for i := range 3 {
			o := d.Do(context.Background(), c)
			if o.Err != nil || string(o.Result) != `{"deleted":true}` {
				t.Fatalf("call %d after the answer: %+v", i+2, o)
			}
		}
		time.Sleep(time.Second)
		if f.calls.Load() != 2 {
			t.Errorf("the tool ran %d times; want 2 (the ask, the answer), then replays", f.calls.Load())
		}
	})
}

// Callers that share a keyed execution which asks all get the request.
func TestInputRequestReachesEveryWaiter(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := &fakeTool{script: []step{{hold: time.Second, err: askUser}}}
		d := New(newRegistry(t, toolSpec{name: "t", timeout: 5 * time.Second, handler: f}), Config{})
		var wg sync.WaitGroup
		for range 3 {
			wg.Go(func() {
				if o := d.Do(context.Background(), keyedCall("k", `{}`)); o.Input != askUser {
					t.Errorf("a waiter got %+v", o)
				}
			})
		}
		wg.Wait()
		if f.calls.Load() != 1 {
			t.Errorf("the tool ran %d times for three waiters", f.calls.Load())
		}
	})
}

// Call's callers (plans, in-process paths) have no user to ask: an input
// request is a schema error for them, which says so.
func TestInputRequestThroughCall(t *testing.T) {
	d := New(newRegistry(t, toolSpec{name: "t", handler: &fakeTool{script: []step{{err: askUser}}}}), Config{})
	_, err := d.Call(context.Background(), Call{Tool: "t"})
	if de := asDispatchError(t, err); de.Kind != KindSchema || de.Attempts != 1 {
		t.Fatalf("got %+v", de)
	}
}

// A shared store's waiters on another replica get the input request
// itself, not an internal error made of its message.
func TestInputRequestCodec(t *testing.T) {
	b, err := OutcomeErrors.EncodeError(askUser)
	if err != nil {
		t.Fatal(err)
	}
	got, err := OutcomeErrors.DecodeError(b)
	ir, ok := got.(*abi.InputRequest)
	if err != nil || !ok || ir.State != "s" || ir.Requests["confirm"].Message != "Sure?" {
		t.Fatalf("decoded %#v, %v from %s", got, err, b)
	}
	de, _ := OutcomeErrors.EncodeError(newError(KindSchema, 1, nil, "bad"))
	if back, err := OutcomeErrors.DecodeError(de); err != nil || back.(*DispatchError).Kind != KindSchema {
		t.Fatalf("an envelope came back as %#v, %v", back, err)
	}
}
