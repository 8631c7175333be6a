package storetest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/toolhost/toolhost/idempotency"
)

// TaskReplicas returns n task stores that share one state (see Replicas).
type TaskReplicas func(t *testing.T, n int) []idempotency.Tasks

// RunTasks runs the task contract against the stores replicas returns.
// Expiry is the store's own test (it needs the store's clock).
func RunTasks(t *testing.T, replicas TaskReplicas) {
	for _, c := range []struct {
		name string
		run  func(*testing.T, []idempotency.Tasks)
	}{
		{"lifecycle", taskLifecycle},
		{"first end wins", taskFirstEndWins},
		{"alias joins", taskAliasJoins},
		{"alias conflict", taskAliasConflict},
		{"unalias", taskUnalias},
		{"one creator", taskOneCreator},
		{"notes", taskNotes},
	} {
		t.Run(c.name, func(t *testing.T) { c.run(t, replicas(t, 3)) })
	}
}

func newTask(id string) idempotency.Task {
	return idempotency.Task{ID: id, Caller: "alice", Fingerprint: "fp", Status: idempotency.TaskWorking}
}

// taskLifecycle: a created task is seen working on every replica, then
// terminal with its result; an unknown id is ErrTaskNotFound.
func taskLifecycle(t *testing.T, stores []idempotency.Tasks) {
	ctx := context.Background()
	got, created, err := stores[0].CreateTask(ctx, newTask("t1"), "")
	if err != nil || !created || got.Status != idempotency.TaskWorking || got.Created.IsZero() || !got.Expires.IsZero() {
		t.Fatalf("create: %+v, %v, %v", got, created, err)
	}
	for i, s := range stores {
		if g, err := s.GetTask(ctx, "t1"); err != nil || g.Status != idempotency.TaskWorking || g.Caller != "alice" {
			t.Fatalf("replica %d: %+v, %v", i, g, err)
		}
	}
	end, err := stores[1].FinishTask(ctx, "t1", idempotency.TaskEnd{Status: idempotency.TaskCompleted, Message: "done", Result: []byte(`{"n":1}`)})
	if err != nil || end.Status != idempotency.TaskCompleted || end.Expires.IsZero() || end.Updated.Before(end.Created) {
		t.Fatalf("finish: %+v, %v", end, err)
	}
	g, err := stores[2].GetTask(ctx, "t1")
	if err != nil || g.Status != idempotency.TaskCompleted || string(g.Result) != `{"n":1}` || g.Message != "done" {
		t.Fatalf("after finish: %+v, %v", g, err)
	}
	if _, err := stores[0].GetTask(ctx, "nope"); !errors.Is(err, idempotency.ErrTaskNotFound) {
		t.Fatalf("unknown id: %v, want ErrTaskNotFound", err)
	}
	if _, err := stores[0].FinishTask(ctx, "nope", idempotency.TaskEnd{Status: idempotency.TaskCancelled}); !errors.Is(err, idempotency.ErrTaskNotFound) {
		t.Fatalf("finishing an unknown id: %v, want ErrTaskNotFound", err)
	}
}

// taskFirstEndWins: a cancelled task stays cancelled when its execution
// reports later.
func taskFirstEndWins(t *testing.T, stores []idempotency.Tasks) {
	ctx := context.Background()
	if _, _, err := stores[0].CreateTask(ctx, newTask("t2"), ""); err != nil {
		t.Fatal(err)
	}
	if _, err := stores[1].FinishTask(ctx, "t2", idempotency.TaskEnd{Status: idempotency.TaskCancelled}); err != nil {
		t.Fatal(err)
	}
	g, err := stores[2].FinishTask(ctx, "t2", idempotency.TaskEnd{Status: idempotency.TaskCompleted, Result: []byte(`1`)})
	if err != nil || g.Status != idempotency.TaskCancelled || len(g.Result) != 0 {
		t.Fatalf("late completion: %+v, %v; want it still cancelled, without a result", g, err)
	}
}

// taskAliasJoins: a second create with the same alias gets the first
// task, on any replica, running or ended.
func taskAliasJoins(t *testing.T, stores []idempotency.Tasks) {
	ctx := context.Background()
	if _, _, err := stores[0].CreateTask(ctx, newTask("a1"), "alice\x00k"); err != nil {
		t.Fatal(err)
	}
	for _, when := range []string{"working", "ended"} {
		for i, s := range stores {
			g, created, err := s.CreateTask(ctx, newTask(fmt.Sprintf("other-%s-%d", when, i)), "alice\x00k")
			if err != nil || created || g.ID != "a1" {
				t.Fatalf("%s, replica %d: %+v created=%v %v; want task a1 joined", when, i, g, created, err)
			}
			if _, err := s.GetTask(ctx, g.ID); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := stores[0].FinishTask(ctx, "a1", idempotency.TaskEnd{Status: idempotency.TaskCompleted, Result: []byte(`1`)}); err != nil {
			t.Fatal(err)
		}
	}
	if _, created, err := stores[1].CreateTask(ctx, newTask("b1"), "bob\x00k"); err != nil || !created {
		t.Fatalf("another caller's alias: created=%v %v", created, err)
	}
}

// taskAliasConflict: an alias presented with another request is refused.
func taskAliasConflict(t *testing.T, stores []idempotency.Tasks) {
	ctx := context.Background()
	if _, _, err := stores[0].CreateTask(ctx, newTask("c1"), "alice\x00c"); err != nil {
		t.Fatal(err)
	}
	other := newTask("c2")
	other.Fingerprint = "fp2"
	if _, _, err := stores[1].CreateTask(ctx, other, "alice\x00c"); !errors.Is(err, idempotency.ErrConflict) {
		t.Fatalf("%v, want a conflict", err)
	}
}

// taskUnalias: an end with Unalias frees the alias for a new task, and
// the old task is still kept.
func taskUnalias(t *testing.T, stores []idempotency.Tasks) {
	ctx := context.Background()
	if _, _, err := stores[0].CreateTask(ctx, newTask("u1"), "alice\x00u"); err != nil {
		t.Fatal(err)
	}
	if _, err := stores[1].FinishTask(ctx, "u1", idempotency.TaskEnd{Status: idempotency.TaskCancelled, Unalias: true}); err != nil {
		t.Fatal(err)
	}
	g, created, err := stores[2].CreateTask(ctx, newTask("u2"), "alice\x00u")
	if err != nil || !created || g.ID != "u2" {
		t.Fatalf("after unalias: %+v created=%v %v; want a new task", g, created, err)
	}
	if old, err := stores[0].GetTask(ctx, "u1"); err != nil || old.Status != idempotency.TaskCancelled {
		t.Fatalf("the unaliased task: %+v, %v", old, err)
	}
}

// taskOneCreator: 3 replicas × 8 creators with one alias at once: one
// task is created, and everyone gets it.
func taskOneCreator(t *testing.T, stores []idempotency.Tasks) {
	ctx := context.Background()
	var created atomic.Int32
	ids := make(chan string, 24)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range 24 {
		wg.Go(func() {
			<-start
			g, c, err := stores[i%len(stores)].CreateTask(ctx, newTask(fmt.Sprintf("r%d", i)), "alice\x00race")
			if err != nil {
				t.Error(err)
				return
			}
			if c {
				created.Add(1)
			}
			ids <- g.ID
		})
	}
	close(start)
	wg.Wait()
	close(ids)
	if n := created.Load(); n != 1 {
		t.Fatalf("%d tasks created, want 1", n)
	}
	first := ""
	for id := range ids {
		if first == "" {
			first = id
		}
		if id != first {
			t.Fatalf("creators got tasks %s and %s", first, id)
		}
	}
}

// taskNotes: a working task's note is its message on every replica; the
// end's message replaces it and a later note does not undo the end.
func taskNotes(t *testing.T, stores []idempotency.Tasks) {
	ctx := context.Background()
	notes := func(i int) idempotency.TaskNotes {
		n, ok := stores[i].(idempotency.TaskNotes)
		if !ok {
			t.Fatalf("store %T keeps no task notes", stores[i])
		}
		return n
	}
	if _, _, err := stores[0].CreateTask(ctx, newTask("n1"), ""); err != nil {
		t.Fatal(err)
	}
	if err := notes(1).NoteTask(ctx, "n1", "3 of 20 segments"); err != nil {
		t.Fatal(err)
	}
	for i, s := range stores {
		if got, err := s.GetTask(ctx, "n1"); err != nil || got.Message != "3 of 20 segments" || got.Status != idempotency.TaskWorking {
			t.Fatalf("replica %d: %+v, %v; want working with the note as its message", i, got, err)
		}
	}
	if _, err := stores[2].FinishTask(ctx, "n1", idempotency.TaskEnd{Status: idempotency.TaskCompleted, Message: "done"}); err != nil {
		t.Fatal(err)
	}
	if err := notes(0).NoteTask(ctx, "n1", "late"); err != nil {
		t.Fatal(err)
	}
	if err := notes(0).NoteTask(ctx, "never", "x"); err != nil {
		t.Fatalf("a note for a task the store does not hold: %v", err)
	}
	if got, _ := stores[1].GetTask(ctx, "n1"); got.Message != "done" || got.Status != idempotency.TaskCompleted {
		t.Fatalf("after the end: %+v; want the end's message", got)
	}
}
