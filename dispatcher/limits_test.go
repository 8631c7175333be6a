package dispatcher

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/toolhost/toolhost/breaker"
)

func TestConcurrencyCapAndQueue(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := &fakeTool{script: []step{{hold: time.Second}}}
		d := New(newRegistry(t, toolSpec{name: "t", timeout: 5 * time.Second, handler: f}), Config{Concurrency: 8})
		var wg sync.WaitGroup
		start := time.Now()
		for range 40 {
			wg.Go(func() {
				if _, err := d.Call(context.Background(), Call{Tool: "t"}); err != nil {
					t.Error(err)
				}
			})
		}
		wg.Wait()
		if m := f.maxSeen.Load(); m != 8 {
			t.Fatalf("max in flight %d, want exactly the cap of 8", m)
		}
		// 40 calls of 1 s, 8 at a time: 5 s, each attempt timed from its
		// own start (a 5 s per-attempt timeout would fire otherwise).
		if took := time.Since(start); took != 5*time.Second {
			t.Fatalf("took %v, want 5s", took)
		}
	})
}

func TestQueueWaitRunsOut(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := &fakeTool{script: []step{{hold: time.Hour}}}
		d := New(newRegistry(t, toolSpec{name: "t", timeout: 2 * time.Hour, idempotent: true, handler: f}),
			Config{Concurrency: 1, QueueTimeout: 3 * time.Second})
		holder, stop := context.WithCancel(context.Background())
		defer stop()
		go d.Call(holder, Call{Tool: "t"}) //nolint:errcheck // holds the only slot
		synctest.Wait()
		start := time.Now()
		_, err := d.Call(context.Background(), Call{Tool: "t"})
		de := asDispatchError(t, err)
		if de.Kind != KindTimeout || de.Attempts != 0 || !errors.Is(de, errQueueWait) {
			t.Fatalf("got %+v; want a queue timeout with no attempt", de)
		}
		if took := time.Since(start); took != 3*time.Second {
			t.Fatalf("waited %v, want the 3s queue timeout", took)
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		start = time.Now()
		_, err = d.Call(ctx, Call{Tool: "t"})
		if de := asDispatchError(t, err); de.Kind != KindTimeout || time.Since(start) != time.Second {
			t.Fatalf("got %+v after %v; the caller's deadline bounds the wait", de, time.Since(start))
		}
		if f.calls.Load() != 1 {
			t.Fatalf("queued calls must not run: %d runs", f.calls.Load())
		}
	})
}

func TestGatherBounded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ok := &fakeTool{script: []step{{hold: time.Second, result: `{"v":1}`}}}
		bad := &fakeTool{script: []step{{err: internalErr}}}
		d := New(newRegistry(t, toolSpec{name: "ok", timeout: 5 * time.Second, handler: ok},
			toolSpec{name: "bad", handler: bad}), Config{})
		var calls []Call
		for i := range 10 {
			name := "ok"
			if i == 3 {
				name = "bad"
			}
			calls = append(calls, Call{Tool: name, Args: json.RawMessage(`{}`)})
		}
		start := time.Now()
		res := d.GatherBounded(context.Background(), calls, 3)
		if m := ok.maxSeen.Load(); m != 3 {
			t.Fatalf("max in flight %d, want 3", m)
		}
		for i, r := range res {
			if i == 3 {
				if !errors.Is(r.Err, ErrInternal) {
					t.Fatalf("result 3: %v, want the internal error in its own slot", r.Err)
				}
				continue
			}
			if r.Err != nil || string(r.Result) != `{"v":1}` {
				t.Fatalf("result %d: %s, %v (one failure must not cancel siblings)", i, r.Result, r.Err)
			}
		}
		// 9 one-second calls, 3 at a time (the failure takes no time): 3 s.
		if took := time.Since(start); took != 3*time.Second {
			t.Fatalf("took %v, want 3s", took)
		}
	})
}

func TestGatherCancelled(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := &fakeTool{script: []step{{hold: time.Second}}}
		d := New(newRegistry(t, toolSpec{name: "t", timeout: 5 * time.Second, handler: f}), Config{})
		ctx, cancel := context.WithTimeout(context.Background(), 1500*time.Millisecond)
		defer cancel()
		calls := make([]Call, 6)
		for i := range calls {
			calls[i] = Call{Tool: "t"}
		}
		res := d.GatherBounded(ctx, calls, 2)
		var ran, timedOut int
		for _, r := range res {
			switch {
			case r.Err == nil:
				ran++
			case errors.Is(r.Err, ErrTimeout):
				timedOut++
			}
		}
		if ran != 2 || timedOut != 4 || f.calls.Load() != 4 {
			t.Fatalf("ran %d, timed out %d, handler calls %d; want 2 done, 2 cut at the deadline, 2 never started", ran, timedOut, f.calls.Load())
		}
	})
}

func TestBreakerOpensAndRecovers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := &fakeTool{script: []step{{err: internalErr}, {err: internalErr}, {err: internalErr}, {}}}
		d := New(newRegistry(t, toolSpec{name: "t", handler: f}), Config{
			Rand:    fixedRand(0),
			Breaker: breaker.Settings{Failures: 3, Window: 10 * time.Second, Cooldown: 30 * time.Second, Jitter: -1},
		})
		for range 3 {
			if _, err := d.Call(context.Background(), Call{Tool: "t"}); !errors.Is(err, ErrInternal) {
				t.Fatalf("got %v, want internal", err)
			}
		}
		_, err := d.Call(context.Background(), Call{Tool: "t"})
		if de := asDispatchError(t, err); de.Kind != KindCircuitOpen || de.Attempts != 0 {
			t.Fatalf("got %+v, want circuit_open with 0 attempts", de)
		}
		time.Sleep(30 * time.Second)
		if _, err := d.Call(context.Background(), Call{Tool: "t"}); err != nil {
			t.Fatalf("half-open probe: %v", err)
		}
		if _, err := d.Call(context.Background(), Call{Tool: "t"}); err != nil {
			t.Fatalf("closed again: %v", err)
		}
		if f.calls.Load() != 5 {
			t.Fatalf("handler ran %d times, want 5", f.calls.Load())
		}
	})
}

func TestBreakerOpenStopsRetryWithoutSleeping(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := &fakeTool{script: []step{{err: transient(0)}}}
		d := New(newRegistry(t, toolSpec{name: "t", handler: f}), Config{
			Rand: fixedRand(0), Breaker: breaker.Settings{Failures: 1, Jitter: -1},
		})
		start := time.Now()
		_, err := d.Call(context.Background(), Call{Tool: "t"})
		de := asDispatchError(t, err)
		if de.Kind != KindCircuitOpen || de.Attempts != 1 || time.Since(start) != 0 {
			t.Fatalf("got %+v after %v; want circuit_open after 1 attempt and no retry sleep", de, time.Since(start))
		}
	})
}

func TestSchemaAndBudgetDoNotTripBreaker(t *testing.T) {
	f := &fakeTool{script: []step{{err: &abiSchema}}}
	d := New(newRegistry(t, toolSpec{name: "t", handler: f}), Config{Breaker: breaker.Settings{Failures: 1}})
	for range 5 {
		if _, err := d.Call(context.Background(), Call{Tool: "t"}); !errors.Is(err, ErrSchema) {
			t.Fatalf("got %v, want schema (and never circuit_open)", err)
		}
	}
}

// Hammer: many concurrent gathers on the real scheduler under -race; the
// per-gather limit and the per-tool cap are never exceeded.
func TestHammerFanOutCaps(t *testing.T) {
	f := &fakeTool{script: []step{{}}}
	d := New(newRegistry(t, toolSpec{name: "t", handler: f}), Config{Concurrency: 5})
	calls := make([]Call, 64)
	for i := range calls {
		calls[i] = Call{Tool: "t"}
	}
	var wg sync.WaitGroup
	for range 20 {
		wg.Go(func() {
			for _, r := range d.GatherBounded(context.Background(), calls, 4) {
				if r.Err != nil {
					t.Error(r.Err)
				}
			}
		})
	}
	wg.Wait()
	if m := f.maxSeen.Load(); m > 5 {
		t.Fatalf("%d in flight, over the per-tool cap of 5", m)
	}
	if n := f.calls.Load(); n != 20*64 {
		t.Fatalf("%d calls ran, want %d", n, 20*64)
	}
}

// A caller that shortens the timeout cannot open the breaker for everyone.
func TestCallerShortenedTimeoutDoesNotTripBreaker(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := &fakeTool{script: []step{{hold: 10 * time.Millisecond}}}
		d := New(newRegistry(t, toolSpec{name: "t", timeout: time.Second, handler: f}),
			Config{Breaker: breaker.Settings{Failures: 2}})
		for range 5 {
			_, err := d.Call(context.Background(), Call{Tool: "t", Options: Options{Timeout: time.Millisecond}})
			if !errors.Is(err, ErrTimeout) {
				t.Fatalf("got %v, want the caller's own timeout", err)
			}
		}
		if _, err := d.Call(context.Background(), Call{Tool: "t"}); err != nil {
			t.Fatalf("a healthy tool refused after other callers' short timeouts: %v", err)
		}
	})
}
