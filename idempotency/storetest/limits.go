package storetest

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/toolhost/toolhost/idempotency"
)

// LimitedReplicas returns n stores that share one state, bounded by
// limits and replaying outcomes for ttl.
type LimitedReplicas func(t *testing.T, n int, limits idempotency.Limits, ttl time.Duration) []idempotency.Store

// RunLimits runs the contract of the per-caller bounds: one caller at its
// bound is refused on every replica while another caller still gets keys,
// and the refused caller gets room again once its kept outcomes expire.
func RunLimits(t *testing.T, replicas LimitedReplicas) {
	t.Run("KeysPerCaller", func(t *testing.T) {
		keysPerCaller(t, replicas(t, 2, idempotency.Limits{MaxKeysPerCaller: 2}, 300*time.Millisecond))
	})
	t.Run("BytesPerCaller", func(t *testing.T) {
		bytesPerCaller(t, replicas(t, 2, idempotency.Limits{MaxBytesPerCaller: 1500}, time.Minute))
	})
}

func keysPerCaller(t *testing.T, stores []idempotency.Store) {
	a := idempotency.WithCaller(context.Background(), "alice")
	b := idempotency.WithCaller(context.Background(), "bob")
	for i, key := range []string{"a1", "a2"} {
		c, err := stores[i%2].Acquire(a, key, "fp")
		if err != nil || !c.Leader() {
			t.Fatalf("alice's key %s: %v", key, err)
		}
		c.Complete(idempotency.Outcome{Result: []byte(`1`)}, true)
	}
	for i, s := range stores {
		_, err := s.Acquire(a, "a3", "fp")
		var le *idempotency.LimitError
		if !errors.Is(err, idempotency.ErrLimit) || !errors.As(err, &le) {
			t.Fatalf("replica %d: alice's third key: %v, want a LimitError", i, err)
		}
		if le.Limit != "keys per caller" || le.Caller != "alice" || le.Held != 2 || le.Max != 2 {
			t.Fatalf("replica %d: %+v", i, le)
		}
		if le.RetryAfter <= 0 || le.RetryAfter > 300*time.Millisecond {
			t.Fatalf("replica %d: RetryAfter %v, want the time until alice's oldest key expires", i, le.RetryAfter)
		}
	}
	// Another caller is not held back by alice's bound.
	c, err := stores[1].Acquire(b, "b1", "fp")
	if err != nil || !c.Leader() {
		t.Fatalf("bob's key while alice is at her bound: %v", err)
	}
	c.Complete(idempotency.Outcome{}, false)
	// Room frees when alice's outcomes expire (a bounded poll on the
	// store's state: expiry runs on the store's clock).
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, err := stores[0].Acquire(a, "a3", "fp")
		if err == nil {
			if !c.Leader() {
				t.Fatal("alice's new key was not hers to lead")
			}
			c.Complete(idempotency.Outcome{}, false)
			break
		}
		if !errors.Is(err, idempotency.ErrLimit) || time.Now().After(deadline) {
			t.Fatalf("alice's key after her outcomes expired: %v", err)
		}
		time.Sleep(20 * time.Millisecond) // polling interval of a bounded poll
	}
}

func bytesPerCaller(t *testing.T, stores []idempotency.Store) {
	a := idempotency.WithCaller(context.Background(), "alice")
	b := idempotency.WithCaller(context.Background(), "bob")
	c, err := stores[0].Acquire(a, "big", "fp")
	if err != nil || !c.Leader() {
		t.Fatalf("alice's first key: %v", err)
	}
	c.Complete(idempotency.Outcome{Result: []byte(`"` + strings.Repeat("x", 1500) + `"`)}, true)
	_, err = stores[1].Acquire(a, "next", "fp")
	var le *idempotency.LimitError
	if !errors.As(err, &le) || le.Limit != "bytes per caller" || le.Held <= 1500 || le.Max != 1500 {
		t.Fatalf("alice over her bytes: %v, want a LimitError on bytes per caller", err)
	}
	if c, err := stores[1].Acquire(b, "next", "fp"); err != nil || !c.Leader() {
		t.Fatalf("bob's key while alice is over her bytes: %v", err)
	}
}

// LimitedTaskReplicas returns n task stores that share one state, bounded
// by limits.
type LimitedTaskReplicas func(t *testing.T, n int, limits idempotency.Limits) []idempotency.Tasks

// RunTaskLimits runs the contract of the per-caller bounds on tasks: a
// caller at its bound is refused a new task on every replica, another
// caller is not.
func RunTaskLimits(t *testing.T, replicas LimitedTaskReplicas) {
	stores := replicas(t, 2, idempotency.Limits{MaxKeysPerCaller: 2})
	ctx := context.Background()
	task := func(id, caller string) idempotency.Task {
		return idempotency.Task{ID: id, Caller: caller, Fingerprint: "fp", Status: idempotency.TaskWorking}
	}
	for i, id := range []string{"t1", "t2"} {
		if _, _, err := stores[i].CreateTask(ctx, task(id, "alice"), ""); err != nil {
			t.Fatalf("alice's task %s: %v", id, err)
		}
	}
	for i, s := range stores {
		_, _, err := s.CreateTask(ctx, task("t3", "alice"), "")
		var le *idempotency.LimitError
		if !errors.As(err, &le) || le.Limit != "tasks: keys per caller" || le.Held != 2 || le.Max != 2 || le.Caller != "alice" {
			t.Fatalf("replica %d: alice's third task: %v, want a LimitError on tasks per caller", i, err)
		}
	}
	if _, created, err := stores[1].CreateTask(ctx, task("b1", "bob"), ""); err != nil || !created {
		t.Fatalf("bob's task while alice is at her bound: %v", err)
	}
}
