package idempotency_test

import (
	"context"
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
