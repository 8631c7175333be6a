package idempotency_test

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/toolhost/toolhost/idempotency"
)

func closed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// The execution is abandoned only when its last waiter releases, the key
// is freed at that moment, and whoever still waits on the stopped
// execution gets its outcome, which is not replayed.
func TestReleaseLastWaiterAbandons(t *testing.T) {
	m := idempotency.NewMemory(0)
	l := leader(t, m, "k", "fp")
	f := follower(t, m, "k", "fp")
	if l.Abandoned() == nil || f.Abandoned() != nil {
		t.Fatal("only the leader has an Abandoned channel")
	}
	if l.Release() {
		t.Fatal("the leader's release abandoned the execution while a follower waits")
	}
	if l.Release() {
		t.Fatal("a second release counted again")
	}
	if closed(l.Abandoned()) || m.Len() != 1 {
		t.Fatal("abandoned with a waiter left")
	}
	if !f.Release() {
		t.Fatal("the last release did not abandon the execution")
	}
	if !closed(l.Abandoned()) {
		t.Fatal("Abandoned is not closed after the last release")
	}
	if n := m.Len(); n != 0 {
		t.Fatalf("Len = %d after abandonment, want the key freed", n)
	}
	next := leader(t, m, "k", "fp") // a new execution, not the stopped one
	stopped := idempotency.Outcome{Attempts: 1}
	l.Complete(stopped, false)
	if o, err := f.Wait(context.Background()); err != nil || !sameOutcome(o, stopped) {
		t.Errorf("a waiter on the stopped execution got %+v, %v", o, err)
	}
	if n := m.Len(); n != 1 {
		t.Errorf("Len = %d: the stopped execution's Complete disturbed the new one", n)
	}
	follower(t, m, "k", "fp") // joins the new execution
	next.Complete(idempotency.Outcome{Result: []byte("2")}, true)
}

// Releasing after completion changes nothing: the outcome stays kept.
func TestReleaseAfterCompleteIsHarmless(t *testing.T) {
	m := idempotency.NewMemory(0)
	l := leader(t, m, "k", "fp")
	want := idempotency.Outcome{Result: []byte("1"), Attempts: 1}
	l.Complete(want, true)
	if l.Release() || closed(l.Abandoned()) {
		t.Fatal("a release after Complete abandoned the execution")
	}
	r := follower(t, m, "k", "fp")
	if r.Release() {
		t.Fatal("a replay's release abandoned the kept outcome")
	}
	if o, _ := follower(t, m, "k", "fp").Wait(context.Background()); !sameOutcome(o, want) {
		t.Errorf("replay after releases = %+v", o)
	}
}

// P goroutines × N iterations on K keys under -race, each caller either
// waiting for the outcome or giving up (Release). A new execution of a key
// starts only once the previous one completed or was abandoned, an
// abandoned execution is never replayed, and every caller that waits gets
// an outcome.
func TestHammerRelease(t *testing.T) {
	const (
		P = 64
		N = 50
		K = 4
	)
	m := idempotency.NewMemory(0)
	type run struct {
		claim     idempotency.Claim
		completed atomic.Bool // set before Complete
	}
	var (
		mu       sync.Mutex
		previous [K]*run
		leaders  atomic.Int64
		stopped  atomic.Int64
	)
	var wg sync.WaitGroup
	for p := range P {
		wg.Go(func() {
			for i := range N {
				k := (p + i) % K
				key := fmt.Sprint("key-", k)
				c, err := m.Acquire(context.Background(), key, "fp")
				if err != nil {
					t.Error(err)
					return
				}
				if c.Leader() {
					leaders.Add(1)
					r := &run{claim: c}
					mu.Lock()
					if prev := previous[k]; prev != nil && !prev.completed.Load() && !closed(prev.claim.Abandoned()) {
						t.Errorf("%s: a new execution started while the previous one runs", key)
					}
					previous[k] = r
					mu.Unlock()
					go func() {
						// The execution: a little work, or until abandoned.
						abandoned := false
						for range 3 {
							if closed(c.Abandoned()) {
								abandoned = true
								break
							}
							runtime.Gosched()
						}
						if abandoned {
							stopped.Add(1)
						}
						r.completed.Store(true)
						// Keys 1 and 3 are never kept, so their leadership rotates.
						c.Complete(idempotency.Outcome{Result: []byte("done"), Attempts: 1}, !abandoned && k%2 == 0)
					}()
				}
				if (p+i)%3 == 0 {
					c.Release() // this caller gives up
					continue
				}
				o, err := c.Wait(context.Background())
				if err != nil || string(o.Result) != "done" {
					t.Errorf("%s: Wait = %+v, %v", key, o, err)
				}
				c.Release()
			}
		})
	}
	wg.Wait()
	t.Logf("%d executions, %d stopped when every waiter gave up", leaders.Load(), stopped.Load())
}

// An abandoned execution stays charged to its caller while it runs (it
// still holds memory) and is uncharged by its Complete, even one that
// asks to keep it: it is never kept.
func TestReleaseAccounting(t *testing.T) {
	m := idempotency.NewMemory(0)
	ctx := idempotency.WithCaller(context.Background(), "alice")
	l, err := m.Acquire(ctx, "k", "fp")
	if err != nil {
		t.Fatal(err)
	}
	if !l.Release() {
		t.Fatal("the only waiter's release did not abandon the execution")
	}
	if keys, _ := m.Usage("alice"); keys != 1 {
		t.Errorf("keys charged while the abandoned execution runs = %d, want 1", keys)
	}
	l.Complete(idempotency.Outcome{Result: []byte("late")}, true)
	if keys, bytes := m.Usage("alice"); keys != 0 || bytes != 0 {
		t.Errorf("usage after the abandoned execution completed = %d keys, %d bytes; want none", keys, bytes)
	}
	if m.Len() != 0 {
		t.Error("an abandoned execution's outcome was kept")
	}
}
