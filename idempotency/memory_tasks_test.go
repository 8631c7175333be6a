package idempotency_test

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/toolhost/toolhost/idempotency"
)

// A terminal task is kept for the store's TTL from its end, then
// forgotten even when no request comes (the timer evicts it); a working
// task never expires.
func TestMemoryTaskExpiry(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		m := idempotency.NewMemory(time.Minute)
		for _, id := range []string{"done", "busy"} {
			if _, _, err := m.CreateTask(ctx, idempotency.Task{ID: id, Caller: "a"}, "a\x00"+id); err != nil {
				t.Fatal(err)
			}
		}
		time.Sleep(time.Hour) // a working task outlives any TTL
		end, err := m.FinishTask(ctx, "done", idempotency.TaskEnd{Status: idempotency.TaskCompleted, Result: []byte(`1`)})
		if err != nil || !end.Expires.Equal(end.Updated.Add(time.Minute)) {
			t.Fatalf("finish: %+v, %v; want it kept one TTL from its end", end, err)
		}
		time.Sleep(time.Minute - time.Nanosecond)
		if _, err := m.GetTask(ctx, "done"); err != nil {
			t.Fatalf("just before expiry: %v", err)
		}
		time.Sleep(time.Nanosecond)
		synctest.Wait()
		if n := m.TaskCount(); n != 1 {
			t.Fatalf("%d tasks held after expiry, want 1 (the working one): the timer did not evict", n)
		}
		if _, err := m.GetTask(ctx, "done"); !errors.Is(err, idempotency.ErrTaskNotFound) {
			t.Fatalf("after expiry: %v, want ErrTaskNotFound", err)
		}
		if g, created, err := m.CreateTask(ctx, idempotency.Task{ID: "again", Caller: "a"}, "a\x00done"); err != nil || !created || g.ID != "again" {
			t.Fatalf("the expired task's alias: %+v %v %v, want a new task", g, created, err)
		}
		if g, err := m.GetTask(ctx, "busy"); err != nil || g.Status != idempotency.TaskWorking {
			t.Fatalf("working task: %+v, %v", g, err)
		}
	})
}

// Tasks count against the store's per-caller key bound; another caller
// is not refused for it.
func TestMemoryTaskLimit(t *testing.T) {
	ctx := context.Background()
	m := idempotency.NewMemoryWith(idempotency.MemoryOptions{Limits: idempotency.Limits{MaxKeysPerCaller: 2}})
	for _, id := range []string{"1", "2"} {
		if _, _, err := m.CreateTask(ctx, idempotency.Task{ID: id, Caller: "a"}, ""); err != nil {
			t.Fatal(err)
		}
	}
	_, _, err := m.CreateTask(ctx, idempotency.Task{ID: "3", Caller: "a"}, "")
	var lim *idempotency.LimitError
	if !errors.As(err, &lim) || lim.Caller != "a" {
		t.Fatalf("third task: %v, want a LimitError for caller a", err)
	}
	if _, _, err := m.CreateTask(ctx, idempotency.Task{ID: "4", Caller: "b"}, ""); err != nil {
		t.Fatalf("another caller: %v", err)
	}
}
