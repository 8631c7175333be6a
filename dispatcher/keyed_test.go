package dispatcher

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/toolhost/toolhost/idempotency"
)

func keyedCall(key, args string) Call {
	return Call{Tool: "t", Args: json.RawMessage(args), Options: Options{IdempotencyKey: key}}
}

func TestKeyConcurrentCallsShareOneExecution(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := &fakeTool{script: []step{{hold: time.Second, result: `{"n":1}`}}}
		d := New(newRegistry(t, toolSpec{name: "t", timeout: 5 * time.Second, handler: f}), Config{})
		var wg sync.WaitGroup
		results := make([]string, 5)
		for i := range results {
			wg.Go(func() {
				res, err := d.Call(context.Background(), keyedCall("k1", `{"a":1,"b":2}`))
				if err != nil {
					t.Error(err)
				}
				results[i] = string(res)
			})
		}
		wg.Wait()
		if f.calls.Load() != 1 {
			t.Fatalf("tool ran %d times for 5 calls with one key", f.calls.Load())
		}
		for _, r := range results {
			if r != `{"n":1}` {
				t.Fatalf("a caller got %q", r)
			}
		}
	})
}

func TestKeyReplayAndExpiry(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := &fakeTool{script: []step{{result: `{"run":1}`}, {result: `{"run":2}`}}}
		d := New(newRegistry(t, toolSpec{name: "t", handler: f}), Config{IdempotencyTTL: time.Minute})
		get := func(args string) string {
			res, err := d.Call(context.Background(), keyedCall("k", args))
			if err != nil {
				t.Fatal(err)
			}
			return string(res)
		}
		if got := get(`{"a":1,"b":2}`); got != `{"run":1}` {
			t.Fatalf("first call: %s", got)
		}
		time.Sleep(59 * time.Second)
		// Same request with keys reordered: a replay, not a new run.
		if got := get(`{"b":2, "a":1}`); got != `{"run":1}` || f.calls.Load() != 1 {
			t.Fatalf("replay within the TTL: got %s after %d runs", got, f.calls.Load())
		}
		time.Sleep(time.Second)
		if got := get(`{"a":1,"b":2}`); got != `{"run":2}` {
			t.Fatalf("after the TTL the key is free: got %s", got)
		}
	})
}

func TestKeyConflictRefused(t *testing.T) {
	f := &fakeTool{script: []step{{result: `{"secret":"for a=1"}`}}}
	d := New(newRegistry(t, toolSpec{name: "t", handler: f}), Config{})
	if _, err := d.Call(context.Background(), keyedCall("k", `{"a":1}`)); err != nil {
		t.Fatal(err)
	}
	res, err := d.Call(context.Background(), keyedCall("k", `{"a":2}`))
	de := asDispatchError(t, err)
	if res != nil || de.Kind != KindSchema || !errors.Is(err, idempotency.ErrConflict) {
		t.Fatalf("got %s, %+v; want a schema error wrapping ErrConflict and no result", res, de)
	}
	if f.calls.Load() != 1 {
		t.Fatalf("tool ran %d times", f.calls.Load())
	}
}

func TestKeyTransientOutcomeNotKept(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := &fakeTool{script: []step{{err: transient(0)}, {err: transient(0)}, {err: transient(0)}, {result: `{"ok":1}`}}}
		d := New(newRegistry(t, toolSpec{name: "t", handler: f}), Config{Rand: fixedRand(0)})
		_, err := d.Call(context.Background(), keyedCall("k", `{}`))
		if de := asDispatchError(t, err); de.Kind != KindTransient || de.Attempts != 3 {
			t.Fatalf("first call: %+v", de)
		}
		res, err := d.Call(context.Background(), keyedCall("k", `{}`))
		if err != nil || string(res) != `{"ok":1}` {
			t.Fatalf("a transient outcome must not be replayed: got %s, %v", res, err)
		}
	})
}

func TestKeyTerminalErrorKept(t *testing.T) {
	f := &fakeTool{script: []step{{err: internalErr}, {result: `{"ok":1}`}}}
	d := New(newRegistry(t, toolSpec{name: "t", handler: f}), Config{})
	for i := range 2 {
		_, err := d.Call(context.Background(), keyedCall("k", `{}`))
		if de := asDispatchError(t, err); de.Kind != KindInternal || de.Attempts != 1 {
			t.Fatalf("call %d: %+v; want the kept internal error", i, de)
		}
	}
	if f.calls.Load() != 1 {
		t.Fatalf("tool ran %d times", f.calls.Load())
	}
}

func TestKeyLeaderLeavingDoesNotCancelExecution(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := &fakeTool{script: []step{{hold: time.Second, result: `{"done":true}`}}}
		d := New(newRegistry(t, toolSpec{name: "t", timeout: 5 * time.Second, handler: f}), Config{})
		leaderCtx, cancel := context.WithCancel(context.Background())
		leaderErr := make(chan error, 1)
		go func() {
			_, err := d.Call(leaderCtx, keyedCall("k", `{}`))
			leaderErr <- err
		}()
		synctest.Wait() // the leader's execution is running
		var follower string
		var wg sync.WaitGroup
		wg.Go(func() {
			res, err := d.Call(context.Background(), keyedCall("k", `{}`))
			if err != nil {
				t.Error(err)
			}
			follower = string(res)
		})
		synctest.Wait()
		cancel()
		if err := <-leaderErr; err == nil {
			t.Fatal("the cancelled leader should get its own cancellation")
		}
		wg.Wait()
		if follower != `{"done":true}` || f.calls.Load() != 1 {
			t.Fatalf("follower got %q after %d runs; want the execution's result", follower, f.calls.Load())
		}
	})
}

// Hammer: 100 goroutines with one key, real scheduler, -race.
func TestKeyHammerOneExecution(t *testing.T) {
	f := &fakeTool{script: []step{{result: `{"x":1}`}}}
	d := New(newRegistry(t, toolSpec{name: "t", handler: f}), Config{})
	var wg sync.WaitGroup
	for range 100 {
		wg.Go(func() {
			for range 10 {
				if res, err := d.Call(context.Background(), keyedCall("same", `{"q":"v"}`)); err != nil || string(res) != `{"x":1}` {
					t.Errorf("got %s, %v", res, err)
				}
			}
		})
	}
	wg.Wait()
	if n := f.calls.Load(); n != 1 {
		t.Fatalf("1000 calls with one key ran the tool %d times", n)
	}
}
