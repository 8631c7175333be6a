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
		{"input", taskInput},
		{"input race", taskInputRace},
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

func inputs(t *testing.T, s idempotency.Tasks) idempotency.TaskInputs {
	t.Helper()
	in, ok := s.(idempotency.TaskInputs)
	if !ok {
		t.Fatalf("store %T keeps no task inputs", s)
	}
	return in
}

// taskInput: a working task waits for input (input_required, its input
// and the end of its wait seen on every replica, no note changes it), a
// swap with a stale prev does nothing, a partial answer swaps the input,
// and resume makes it working again without input; then it ends as any
// task. A task cancelled while it waits stays cancelled.
func taskInput(t *testing.T, stores []idempotency.Tasks) {
	ctx := context.Background()
	if _, _, err := stores[0].CreateTask(ctx, newTask("i1"), "alice\x00i"); err != nil {
		t.Fatal(err)
	}
	got, err := inputs(t, stores[1]).AwaitTaskInput(ctx, "i1", []byte("ask-1"), time.Minute)
	if err != nil || got.Status != idempotency.TaskInputRequired || string(got.Input) != "ask-1" || got.Expires.IsZero() {
		t.Fatalf("await: %+v, %v", got, err)
	}
	if got.Status.Terminal() {
		t.Fatal("input_required is terminal")
	}
	_ = stores[0].(idempotency.TaskNotes).NoteTask(ctx, "i1", "a note")
	for i, s := range stores {
		g, err := s.GetTask(ctx, "i1")
		if err != nil || g.Status != idempotency.TaskInputRequired || string(g.Input) != "ask-1" || g.Message == "a note" {
			t.Fatalf("replica %d: %+v, %v", i, g, err)
		}
	}
	if again, err := inputs(t, stores[2]).AwaitTaskInput(ctx, "i1", []byte("other"), time.Minute); err != nil || string(again.Input) != "ask-1" {
		t.Fatalf("awaiting twice: %+v, %v; want the first input kept", again, err)
	}
	if _, ok, err := inputs(t, stores[2]).SwapTaskInput(ctx, "i1", []byte("stale"), []byte("x"), true); ok || err != nil {
		t.Fatalf("a stale swap: %v, %v; want none", ok, err)
	}
	if g, ok, err := inputs(t, stores[2]).SwapTaskInput(ctx, "i1", []byte("ask-1"), []byte("ask-1+a"), false); !ok || err != nil || string(g.Input) != "ask-1+a" || g.Status != idempotency.TaskInputRequired {
		t.Fatalf("a partial answer: %+v, %v, %v", g, ok, err)
	}
	g, ok, err := inputs(t, stores[0]).SwapTaskInput(ctx, "i1", []byte("ask-1+a"), nil, true)
	if !ok || err != nil || g.Status != idempotency.TaskWorking || len(g.Input) != 0 || !g.Expires.IsZero() {
		t.Fatalf("resume: %+v, %v, %v", g, ok, err)
	}
	if j, created, err := stores[1].CreateTask(ctx, newTask("i1-join"), "alice\x00i"); err != nil || created || j.ID != "i1" {
		t.Fatalf("the alias after resume: %+v created=%v %v", j, created, err)
	}
	if end, err := stores[1].FinishTask(ctx, "i1", idempotency.TaskEnd{Status: idempotency.TaskCompleted, Result: []byte(`1`)}); err != nil || end.Status != idempotency.TaskCompleted {
		t.Fatalf("finish after resume: %+v, %v", end, err)
	}
	if _, ok, _ := inputs(t, stores[0]).SwapTaskInput(ctx, "i1", nil, nil, true); ok {
		t.Fatal("a completed task resumed")
	}

	if _, _, err := stores[0].CreateTask(ctx, newTask("i2"), ""); err != nil {
		t.Fatal(err)
	}
	if _, err := inputs(t, stores[0]).AwaitTaskInput(ctx, "i2", []byte("ask"), time.Minute); err != nil {
		t.Fatal(err)
	}
	if end, err := stores[1].FinishTask(ctx, "i2", idempotency.TaskEnd{Status: idempotency.TaskCancelled}); err != nil || end.Status != idempotency.TaskCancelled || len(end.Input) != 0 {
		t.Fatalf("cancel while waiting: %+v, %v", end, err)
	}
	if g, ok, _ := inputs(t, stores[2]).SwapTaskInput(ctx, "i2", []byte("ask"), nil, true); ok || g.Status != idempotency.TaskCancelled {
		t.Fatalf("answering a cancelled task: %+v swapped=%v", g, ok)
	}
	if g, _ := inputs(t, stores[2]).AwaitTaskInput(ctx, "i2", []byte("ask"), time.Minute); g.Status != idempotency.TaskCancelled {
		t.Fatalf("a cancelled task asked again: %+v", g)
	}
	if _, err := inputs(t, stores[0]).AwaitTaskInput(ctx, "nope", nil, time.Minute); !errors.Is(err, idempotency.ErrTaskNotFound) {
		t.Fatalf("awaiting an unknown task: %v", err)
	}
}

// taskInputRace: 3 replicas × 8 answers to one waiting task at once: one
// resumes it.
func taskInputRace(t *testing.T, stores []idempotency.Tasks) {
	ctx := context.Background()
	if _, _, err := stores[0].CreateTask(ctx, newTask("ir"), ""); err != nil {
		t.Fatal(err)
	}
	if _, err := inputs(t, stores[0]).AwaitTaskInput(ctx, "ir", []byte("ask"), time.Minute); err != nil {
		t.Fatal(err)
	}
	var won atomic.Int32
	var wg sync.WaitGroup
	for i := range 24 {
		wg.Go(func() {
			_, ok, err := inputs(t, stores[i%len(stores)]).SwapTaskInput(ctx, "ir", []byte("ask"), nil, true)
			if err != nil {
				t.Error(err)
			}
			if ok {
				won.Add(1)
			}
		})
	}
	wg.Wait()
	if n := won.Load(); n != 1 {
		t.Fatalf("%d answers resumed the task, want 1", n)
	}
}
