// Package storetest is the contract every idempotency.Store keeps, as
// tests that run against any implementation: the in-memory store, and the
// Redis store seen through several instances (replicas) at once.
package storetest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolhost/toolhost/idempotency"
)

// Replicas returns n stores that share one state: n views of one Memory,
// or n Redis stores on one server.
type Replicas func(t *testing.T, n int) []idempotency.Store

// Run runs the contract against the stores replicas gives.
func Run(t *testing.T, replicas Replicas) {
	t.Run("OneLeaderAcrossReplicas", func(t *testing.T) { oneLeader(t, replicas(t, 3)) })
	t.Run("ReplayAfterCompletion", func(t *testing.T) { replayAfter(t, replicas(t, 2)) })
	t.Run("FingerprintMismatchRefused", func(t *testing.T) { mismatch(t, replicas(t, 2)) })
	t.Run("NotKeptRunsAgain", func(t *testing.T) { notKept(t, replicas(t, 2)) })
	t.Run("KeysAreDistinct", func(t *testing.T) { distinct(t, replicas(t, 2)) })
	t.Run("LastWaiterAbandons", func(t *testing.T) { abandon(t, replicas(t, 2)) })
}

// abandon: when every waiter of a running key has released it (the last
// on another replica than the leader), the leader hears it on Abandoned,
// the key is free for a new execution, and the stopped leader's late
// completion does not touch the new one.
func abandon(t *testing.T, stores []idempotency.Store) {
	ctx := context.Background()
	c, _ := stores[0].Acquire(ctx, "k", "fp")
	f, err := stores[1].Acquire(ctx, "k", "fp")
	if err != nil || f.Leader() || f.Abandoned() != nil {
		t.Fatalf("second acquire: %v; want a follower with a nil Abandoned", err)
	}
	if c.Release() {
		t.Fatal("the leader's release abandoned an execution a follower still waits for")
	}
	if !f.Release() {
		t.Fatal("the last waiter's release did not abandon the execution")
	}
	if f.Release() {
		t.Fatal("a second release reported abandoning again")
	}
	select {
	case <-c.Abandoned():
	case <-time.After(10 * time.Second):
		t.Fatal("the leader never heard that its execution was abandoned")
	}
	again, err := stores[1].Acquire(ctx, "k", "fp")
	if err != nil || !again.Leader() {
		t.Fatalf("after abandonment: %v, want to lead a new execution", err)
	}
	c.Complete(idempotency.Outcome{Result: []byte(`"stopped"`)}, false)
	again.Complete(idempotency.Outcome{Result: []byte(`"new"`)}, true)
	r, _ := stores[0].Acquire(ctx, "k", "fp")
	if o, _ := r.Wait(ctx); string(o.Result) != `"new"` {
		t.Fatalf("replay %q, want the new execution's outcome", o.Result)
	}
}

// oneLeader: 3 replicas × 8 callers present one key at once; exactly one
// leads, and every caller gets the leader's outcome.
func oneLeader(t *testing.T, stores []idempotency.Store) {
	ctx := context.Background()
	var leaders atomic.Int32
	var wg sync.WaitGroup
	results := make(chan string, 24)
	start := make(chan struct{})
	for i := range 24 {
		wg.Go(func() {
			<-start
			c, err := stores[i%len(stores)].Acquire(ctx, "k", "fp")
			if err != nil {
				t.Error(err)
				return
			}
			if c.Leader() {
				leaders.Add(1)
				c.Complete(idempotency.Outcome{Result: []byte(fmt.Sprintf(`"ran by %d"`, i)), Attempts: 1}, true)
			}
			o, err := c.Wait(ctx)
			if err != nil {
				t.Error(err)
				return
			}
			results <- string(o.Result)
		})
	}
	close(start)
	wg.Wait()
	close(results)
	if n := leaders.Load(); n != 1 {
		t.Fatalf("%d leaders, want 1", n)
	}
	var first string
	for r := range results {
		if first == "" {
			first = r
		}
		if r != first {
			t.Fatalf("callers got different outcomes: %q and %q", first, r)
		}
	}
}

// replayAfter: a kept outcome (result or error) is replayed on every
// replica without leading.
func replayAfter(t *testing.T, stores []idempotency.Store) {
	ctx := context.Background()
	c, err := stores[0].Acquire(ctx, "k", "fp")
	if err != nil || !c.Leader() {
		t.Fatalf("first acquire: %v, leader %v", err, c != nil && c.Leader())
	}
	c.Complete(idempotency.Outcome{Result: []byte(`{"n":1}`), Attempts: 2}, true)
	for i, s := range stores {
		r, err := s.Acquire(ctx, "k", "fp")
		if err != nil {
			t.Fatal(err)
		}
		if r.Leader() {
			t.Fatalf("replica %d led a completed key", i)
		}
		o, err := r.Wait(ctx)
		if err != nil || string(o.Result) != `{"n":1}` || o.Attempts != 2 {
			t.Fatalf("replica %d replayed %+v, %v", i, o, err)
		}
	}
	e, _ := stores[1].Acquire(ctx, "e", "fp")
	e.Complete(idempotency.Outcome{Err: errors.New("schema: bad"), Attempts: 1}, true)
	r, err := stores[0].Acquire(ctx, "e", "fp")
	if err != nil || r.Leader() {
		t.Fatalf("error replay: %v", err)
	}
	if o, _ := r.Wait(ctx); o.Err == nil || o.Err.Error() != "schema: bad" {
		t.Fatalf("replayed error %v, want schema: bad", o.Err)
	}
}

// mismatch: a key held by one request is refused to another, on any
// replica, while it runs and once kept.
func mismatch(t *testing.T, stores []idempotency.Store) {
	ctx := context.Background()
	c, err := stores[0].Acquire(ctx, "k", "fp1")
	if err != nil {
		t.Fatal(err)
	}
	for _, when := range []string{"running", "kept"} {
		for i, s := range stores {
			if _, err := s.Acquire(ctx, "k", "fp2"); !errors.Is(err, idempotency.ErrConflict) {
				t.Fatalf("%s, replica %d: %v, want a conflict", when, i, err)
			}
		}
		c.Complete(idempotency.Outcome{Result: []byte(`1`)}, true)
	}
}

// notKept: waiters get a not-kept outcome, and the next call leads anew.
func notKept(t *testing.T, stores []idempotency.Store) {
	ctx := context.Background()
	c, _ := stores[0].Acquire(ctx, "k", "fp")
	f, err := stores[1].Acquire(ctx, "k", "fp")
	if err != nil || f.Leader() {
		t.Fatalf("second acquire: %v", err)
	}
	got := make(chan idempotency.Outcome, 1)
	ready := make(chan struct{})
	go func() {
		close(ready)
		o, err := f.Wait(ctx)
		if err != nil {
			t.Error(err)
		}
		got <- o
	}()
	<-ready
	c.Complete(idempotency.Outcome{Err: errors.New("transient: later"), Attempts: 3}, false)
	if o := <-got; o.Err == nil || o.Attempts != 3 {
		t.Fatalf("waiter got %+v, want the not-kept outcome", o)
	}
	again, err := stores[1].Acquire(ctx, "k", "fp")
	if err != nil || !again.Leader() {
		t.Fatalf("after a not-kept outcome: %v, want to lead", err)
	}
	again.Complete(idempotency.Outcome{}, false)
}

// distinct: different keys do not share executions.
func distinct(t *testing.T, stores []idempotency.Store) {
	ctx := context.Background()
	a, _ := stores[0].Acquire(ctx, "alice\x00k", "fp")
	b, err := stores[1].Acquire(ctx, "bob\x00k", "fp")
	if err != nil || !a.Leader() || !b.Leader() {
		t.Fatalf("two callers' keys: %v; both must lead", err)
	}
	a.Complete(idempotency.Outcome{}, true)
	b.Complete(idempotency.Outcome{}, true)
}
