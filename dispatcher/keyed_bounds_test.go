package dispatcher

import (
	"context"
	"errors"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/toolhost/toolhost/events"
	"github.com/toolhost/toolhost/idempotency"
)

// Regression (issue 10 finding 11): a keyed call the idempotency store
// has no room for is refused as rate_limited, naming the bound and when
// room frees; the tool does not run without the deduplication it asked
// for, and calls without a key are unaffected.
func TestKeyOverStoreBoundIsRateLimited(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := &fakeTool{script: []step{{result: `{"ok":1}`}}}
		d := New(newRegistry(t, toolSpec{name: "t", handler: f}), Config{IdempotencyTTL: time.Minute,
			IdempotencyLimits: idempotency.Limits{MaxKeysPerCaller: 1}})
		call := func(caller, key string) error {
			c := keyedCall(key, `{}`)
			c.Caller = caller
			_, err := d.Call(context.Background(), c)
			return err
		}
		if err := call("alice", "k1"); err != nil {
			t.Fatal(err)
		}
		time.Sleep(10 * time.Second)
		err := call("alice", "k2")
		de := asDispatchError(t, err)
		if !errors.Is(err, ErrRateLimited) || !strings.Contains(de.Message, "keys per caller") || de.Attempts != 0 {
			t.Fatalf("over the bound: %+v", de)
		}
		if de.RetryAfterMS < 50_000 || de.RetryAfterMS > 50_001 {
			t.Errorf("RetryAfterMS = %d, want when k1 expires (50 s)", de.RetryAfterMS)
		}
		if f.calls.Load() != 1 {
			t.Errorf("the tool ran %d times, want 1: a refused key must not run", f.calls.Load())
		}
		if err := call("alice", "k1"); err != nil {
			t.Errorf("replay of the held key: %v", err)
		}
		if err := call("bob", "k2"); err != nil {
			t.Errorf("another caller: %v", err)
		}
		if _, err := d.Call(context.Background(), Call{Tool: "t", Options: Options{Caller: "alice"}}); err != nil {
			t.Errorf("a call without a key: %v", err)
		}
		time.Sleep(time.Minute)
		if err := call("alice", "k2"); err != nil {
			t.Errorf("after k1 expired: %v", err)
		}
	})
}

// Regression (issue 10 finding 8): dispatch events carry the caller, so
// that /events can scope them; breaker events are the server's.
func TestEventsCarryCaller(t *testing.T) {
	bus := events.NewBus(nil)
	got := subscribe(t, bus)
	d := New(newRegistry(t, toolSpec{name: "t", handler: &fakeTool{script: []step{{}}}}), Config{Events: bus})
	if _, err := d.Call(context.Background(), Call{Tool: "t", Options: Options{Caller: "alice"}}); err != nil {
		t.Fatal(err)
	}
	d.Call(context.Background(), Call{Tool: "nope", Options: Options{Caller: "bob"}})
	es := got()
	if len(es) != 3 {
		t.Fatalf("%d events, want attempt, result, refusal", len(es))
	}
	for i, want := range []string{"alice", "alice", "bob"} {
		if es[i].Caller != want {
			t.Errorf("event %d (%s) caller %q, want %q", i, es[i].Type, es[i].Caller, want)
		}
	}
}
