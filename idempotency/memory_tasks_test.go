package idempotency_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
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

// Hammer: 8 goroutines × 200 tasks each, sharing aliases, created,
// finished (some unaliased), read and expired at once. Run under -race.
// Once everything has expired the books are back to zero: a caller may
// hold exactly its bound of tasks again.
func TestMemoryTaskHammer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		const perCaller = 1000
		m := idempotency.NewMemoryWith(idempotency.MemoryOptions{TTL: time.Second, Limits: idempotency.Limits{MaxKeysPerCaller: perCaller}})
		var wg sync.WaitGroup
		for g := range 8 {
			wg.Go(func() {
				caller := fmt.Sprintf("c%d", g%2)
				for i := range 200 {
					id := fmt.Sprintf("t%d-%d", g, i)
					got, created, err := m.CreateTask(ctx, idempotency.Task{ID: id, Caller: caller, Fingerprint: "fp"}, fmt.Sprintf("%s\x00k%d", caller, i%7))
					if err != nil {
						t.Error(err)
						return
					}
					if created {
						end := idempotency.TaskEnd{Status: idempotency.TaskCompleted, Result: []byte(`1`), Unalias: i%3 == 0}
						if _, err := m.FinishTask(ctx, id, end); err != nil {
							t.Error(err)
						}
					}
					if _, err := m.GetTask(ctx, got.ID); err != nil && !errors.Is(err, idempotency.ErrTaskNotFound) {
						t.Error(err)
					}
					if i%50 == 0 {
						time.Sleep(300 * time.Millisecond)
					}
				}
			})
		}
		wg.Wait()
		time.Sleep(2 * time.Second)
		synctest.Wait()
		if n := m.TaskCount(); n != 0 {
			t.Fatalf("%d tasks held after every one expired", n)
		}
		for i := range perCaller {
			if _, _, err := m.CreateTask(ctx, idempotency.Task{ID: fmt.Sprint("again", i), Caller: "c0"}, ""); err != nil {
				t.Fatalf("task %d of %d after expiry: %v (the books leak)", i+1, perCaller, err)
			}
		}
		if _, _, err := m.CreateTask(ctx, idempotency.Task{ID: "one-more", Caller: "c0"}, ""); err == nil {
			t.Fatal("a task over the bound was taken")
		}
	})
}

// A task that waits for input is forgotten (with its alias and its
// bytes) when no answer comes within its wait; one answered in time
// works on, and its old wait does not fire on it later.
func TestMemoryTaskInputWait(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		m := idempotency.NewMemory(time.Minute)
		for _, id := range []string{"idle", "answered"} {
			if _, _, err := m.CreateTask(ctx, idempotency.Task{ID: id, Caller: "a"}, "a\x00"+id); err != nil {
				t.Fatal(err)
			}
			if _, err := m.AwaitTaskInput(ctx, id, []byte("ask"), 10*time.Minute); err != nil {
				t.Fatal(err)
			}
		}
		time.Sleep(5 * time.Minute)
		if _, ok, err := m.SwapTaskInput(ctx, "answered", []byte("ask"), nil, true); !ok || err != nil {
			t.Fatalf("answer: %v, %v", ok, err)
		}
		time.Sleep(5*time.Minute + time.Nanosecond)
		synctest.Wait()
		if _, err := m.GetTask(ctx, "idle"); !errors.Is(err, idempotency.ErrTaskNotFound) {
			t.Fatalf("unanswered after its wait: %v, want ErrTaskNotFound", err)
		}
		if g, err := m.GetTask(ctx, "answered"); err != nil || g.Status != idempotency.TaskWorking {
			t.Fatalf("answered in time: %+v, %v; want working", g, err)
		}
		if n := m.TaskCount(); n != 1 {
			t.Fatalf("%d tasks held, want 1", n)
		}
		if _, created, err := m.CreateTask(ctx, idempotency.Task{ID: "new", Caller: "a"}, "a\x00idle"); err != nil || !created {
			t.Fatalf("the forgotten task's alias: created=%v %v", created, err)
		}
	})
}
