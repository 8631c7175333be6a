package dispatcher

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/toolhost/toolhost/events"
)

// start runs d.Do(ctx, c) on a goroutine and returns its outcome channel.
func start(d *Dispatcher, ctx context.Context, c Call) <-chan Outcome {
	ch := make(chan Outcome, 1)
	go func() { ch <- d.Do(ctx, c) }()
	return ch
}

// A plain call whose caller cancels stops the handler at once and reports
// the attempt it made as a cancelled outcome.
func TestCancelPlainCall(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := &fakeTool{script: []step{{block: true}}}
		d := New(newRegistry(t, toolSpec{name: "t", timeout: time.Hour, idempotent: true, handler: f}), Config{})
		ctx, cancel := context.WithCancel(context.Background())
		out := start(d, ctx, Call{Tool: "t", Args: []byte(`{}`)})
		synctest.Wait()
		cancel()
		o := <-out
		if !o.Cancelled || o.Err == nil || o.Attempts != 1 || f.calls.Load() != 1 {
			t.Fatalf("outcome %+v (err %v) after %d runs; want cancelled with 1 attempt", o, o.Err, f.calls.Load())
		}
		if f.inFlight.Load() != 0 {
			t.Fatal("the handler still runs after its caller cancelled")
		}
	})
}

// A deadline is not a cancellation: the outcome is a timeout, not
// Cancelled.
func TestDeadlineIsNotCancelled(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := &fakeTool{script: []step{{block: true}}}
		d := New(newRegistry(t, toolSpec{name: "t", timeout: time.Hour, handler: f}), Config{})
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		o := d.Do(ctx, Call{Tool: "t", Args: []byte(`{}`)})
		if o.Cancelled || o.Err == nil || o.Err.Kind != KindTimeout {
			t.Fatalf("outcome %+v, err %v; want a timeout that is not Cancelled", o, o.Err)
		}
	})
}

// Two callers share a keyed execution. The first to cancel leaves it
// running for the other; when the second cancels too, the execution is
// stopped, its last waiter reports the attempt made, and the stopped
// outcome is not kept: the next call with the key runs the tool again.
func TestCancelKeyedLastWaiterStopsExecution(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		bus := events.NewBus(nil)
		recorded := subscribe(t, bus)
		f := &fakeTool{script: []step{{block: true}, {result: `{"run":2}`}}}
		d := New(newRegistry(t, toolSpec{name: "t", timeout: time.Hour, handler: f}), Config{Events: bus})
		ctx1, cancel1 := context.WithCancel(context.Background())
		ctx2, cancel2 := context.WithCancel(context.Background())
		first := start(d, ctx1, keyedCall("k", `{}`))
		synctest.Wait() // the execution runs
		second := start(d, ctx2, keyedCall("k", `{}`))
		synctest.Wait() // the second caller waits on it

		cancel1()
		o1 := <-first
		synctest.Wait()
		if !o1.Cancelled || o1.Attempts != 0 {
			t.Fatalf("first caller: %+v; want cancelled with no attempts of its own", o1)
		}
		if f.inFlight.Load() != 1 {
			t.Fatal("the execution stopped although a waiter stays")
		}

		cancel2()
		o2 := <-second
		if !o2.Cancelled || o2.Attempts != 1 || o2.Err == nil {
			t.Fatalf("last caller: %+v; want cancelled with the 1 attempt made", o2)
		}
		synctest.Wait()
		if f.inFlight.Load() != 0 {
			t.Fatal("the execution still runs after its last waiter cancelled")
		}

		o := d.Do(context.Background(), keyedCall("k", `{}`))
		if o.Err != nil || string(o.Result) != `{"run":2}` || f.calls.Load() != 2 {
			t.Fatalf("next call with the key: %s, %v after %d runs; a stopped execution must not be replayed", o.Result, o.Err, f.calls.Load())
		}

		var cancelledResults int
		for _, e := range recorded() {
			if r, ok := e.Data.(ResultEvent); ok && r.Cancelled {
				cancelledResults++
			}
		}
		// The stopped execution's (which is the leader's dispatch) and the
		// follower's shared one.
		if cancelledResults != 2 {
			t.Errorf("%d dispatch.result events marked cancelled, want 2", cancelledResults)
		}
	})
}

// A waiter that joins after the last one left starts a new execution
// rather than joining the one being stopped.
func TestCancelKeyedJoinAfterAbandonRunsAnew(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := &fakeTool{script: []step{{block: true}, {result: `{"run":2}`}}}
		d := New(newRegistry(t, toolSpec{name: "t", timeout: time.Hour, handler: f}), Config{})
		ctx, cancel := context.WithCancel(context.Background())
		first := start(d, ctx, keyedCall("k", `{}`))
		synctest.Wait()
		cancel()
		if o := <-first; !o.Cancelled || o.Attempts != 1 {
			t.Fatalf("cancelled leader: %+v", o)
		}
		o := d.Do(context.Background(), keyedCall("k", `{}`))
		if o.Err != nil || string(o.Result) != `{"run":2}` {
			t.Fatalf("next call: %s, %v", o.Result, o.Err)
		}
	})
}
