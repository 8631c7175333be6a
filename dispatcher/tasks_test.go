package dispatcher

import (
	"context"
	"testing"

	"github.com/toolhost/toolhost/idempotency"
	"github.com/toolhost/toolhost/internal/testkit/redistest"
)

// With idempotency = "local-fallback", tasks are created, read and ended
// in the replica's memory while Redis is away, as keyed calls run there.
func TestRedisDownTasksFallback(t *testing.T) {
	srv := redistest.Start(t)
	tool := newGated()
	close(tool.release)
	d := redisReplicas(t, srv, 1, tool, true)[0]
	if d.Tasks() == nil {
		t.Fatal("a Fallback of the Redis and memory stores keeps no tasks")
	}
	srv.Stop()
	ctx := context.Background()
	got, created, err := d.Tasks().CreateTask(ctx, idempotency.Task{ID: "t1", Caller: "a", Fingerprint: "fp"}, "a\x00k")
	if err != nil || !created {
		t.Fatalf("create while Redis is away: %+v %v %v", got, created, err)
	}
	if _, err := d.Tasks().FinishTask(ctx, "t1", idempotency.TaskEnd{Status: idempotency.TaskCompleted, Result: []byte(`1`)}); err != nil {
		t.Fatal(err)
	}
	if g, err := d.Tasks().GetTask(ctx, "t1"); err != nil || g.Status != idempotency.TaskCompleted {
		t.Fatalf("get: %+v, %v", g, err)
	}
}

// storeWithoutTasks is an idempotency.Store that keeps no tasks.
type storeWithoutTasks struct{ idempotency.Store }

// The default store keeps tasks; a store that does not leaves them off.
func TestTasksOfStore(t *testing.T) {
	if New(nil, Config{}).Tasks() == nil {
		t.Fatal("the default in-memory store keeps no tasks")
	}
	if New(nil, Config{Idempotency: storeWithoutTasks{idempotency.NewMemory(0)}}).Tasks() != nil {
		t.Fatal("a store without tasks was taken for one")
	}
}
