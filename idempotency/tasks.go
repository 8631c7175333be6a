package idempotency

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// TaskStatus is where a task is in its life: working (and, while its tool
// waits for the user, input_required, then working again), then one of
// the terminal statuses, which never change again.
type TaskStatus string

// The statuses of a task (those of MCP Tasks).
const (
	TaskWorking TaskStatus = "working"
	// TaskInputRequired: the execution stopped to ask the user (the
	// tool's input request, held in Task.Input) and resumes when the
	// answers come. Not terminal.
	TaskInputRequired TaskStatus = "input_required"
	TaskCompleted     TaskStatus = "completed"
	TaskFailed        TaskStatus = "failed"
	TaskCancelled     TaskStatus = "cancelled"
)

// Terminal reports whether s is a status a task ends in.
func (s TaskStatus) Terminal() bool { return s != TaskWorking && s != TaskInputRequired && s != "" }

// Task is the state of one MCP task: an execution a client follows by its
// id rather than by holding its request open. The store keeps it beside
// the idempotency keys, in the same place (memory or Redis), so a task
// started on one replica is seen by all.
type Task struct {
	// ID is the task id the client polls: random, unguessable.
	ID string
	// Caller is the identity that started it; only it may see the task.
	Caller string
	// Fingerprint digests the request (tool and arguments), so that a
	// second request with the same idempotency key but other arguments is
	// refused rather than joined.
	Fingerprint string
	Status      TaskStatus
	// Message is a short word on the status for people (statusMessage).
	Message string
	// Result is the end of the execution as the transport encodes it
	// (opaque to the store); set once the task is terminal.
	Result []byte
	// Created and Updated are on the store's clock (Redis TIME for the
	// Redis store).
	Created, Updated time.Time
	// Expires is when a terminal task is forgotten: its end plus the
	// store's replay TTL; for a task in input_required, the end of its
	// wait for the answers. Zero while the task works.
	Expires time.Time
	// Input is what a task in input_required waits with (opaque to the
	// store: the transport's parked call, its questions and the answers
	// so far); empty in every other status.
	Input []byte
}

// TaskEnd is how a task ended, for FinishTask.
type TaskEnd struct {
	Status  TaskStatus
	Message string
	Result  []byte
	// Unalias frees the task's idempotency key at once, so that the next
	// task with the key runs anew: the execution's outcome is one the
	// dispatcher does not replay either (transient, timeout, cancelled).
	// The task itself is still kept for the TTL.
	Unalias bool
}

// Tasks keeps task state. The stores that implement Store (Memory and the
// Redis store) implement Tasks too, with the same TTL: a task's result is
// kept as long as a keyed outcome is replayed. Implementations must be
// safe for concurrent use.
type Tasks interface {
	// CreateTask stores t, which must be working. When alias (a task's
	// idempotency key, scoped by caller) is not empty and already names
	// a task that is kept, nothing is stored: that task is returned with
	// created false, or a *ConflictError when its Fingerprint differs. A
	// new task over the store's bounds is a *LimitError; a store that
	// cannot answer now, an error wrapping ErrUnavailable.
	CreateTask(ctx context.Context, t Task, alias string) (got Task, created bool, err error)
	// GetTask returns the task with id, or an error wrapping
	// ErrTaskNotFound when there is none (never was, or expired).
	GetTask(ctx context.Context, id string) (Task, error)
	// FinishTask moves a working task to end.Status (terminal) and keeps
	// it for the TTL from now. A task already terminal is left as it is:
	// the first end wins, so a cancelled task stays cancelled when its
	// execution returns later. It returns the task as it now is.
	FinishTask(ctx context.Context, id string, end TaskEnd) (Task, error)
}

// TaskNotes is kept by the stores that can show a working task's latest
// word from its execution (a tool's progress or log message) as its
// Message, the statusMessage tasks/get shows. Memory and the Redis store
// keep it; so does a Fallback of two stores that do.
type TaskNotes interface {
	// NoteTask sets the Message of the working task id. A task already
	// terminal keeps its end's message, and one the store does not hold
	// is no error: a note is best effort and may come after the end.
	NoteTask(ctx context.Context, id, msg string) error
}

// TaskInputs is kept by the stores whose tasks can wait for the user
// (MCP's input_required): Memory and the Redis store, and a Fallback of
// two that do. The execution itself does not wait: it ends, its request
// is kept in the task, and the answers start it again, on whichever
// replica receives them.
type TaskInputs interface {
	// AwaitTaskInput moves the working task id to input_required with
	// input, to be forgotten (gone, as an expired task) when no answer has
	// resumed it within wait. A task in any other status is left as it is
	// and returned: a task cancelled while its tool asked stays
	// cancelled.
	AwaitTaskInput(ctx context.Context, id string, input []byte, wait time.Duration) (Task, error)
	// SwapTaskInput replaces the Input of the input_required task id by
	// next, only if it is still prev (compare and swap: of two answers
	// racing, on one replica or two, one wins), and with resume moves the
	// task back to working (its Input cleared, its wait ended). It reports
	// whether it swapped.
	SwapTaskInput(ctx context.Context, id string, prev, next []byte, resume bool) (Task, bool, error)
}

// ErrTaskNotFound matches a task id the store does not hold.
var ErrTaskNotFound = errors.New("task not found")

func taskNotFound(id string) error {
	return fmt.Errorf("task %q: %w (it never existed, or it ended longer ago than the result is kept)", id, ErrTaskNotFound)
}

// CreateTask implements Tasks: Primary, or Local while Primary is
// unavailable.
func (f *Fallback) CreateTask(ctx context.Context, t Task, alias string) (Task, bool, error) {
	p, l, err := f.tasks()
	if err != nil {
		return Task{}, false, err
	}
	got, created, err := p.CreateTask(ctx, t, alias)
	if err == nil || !errors.Is(err, ErrUnavailable) {
		return got, created, err
	}
	if f.OnFallback != nil {
		f.OnFallback(err)
	}
	return l.CreateTask(ctx, t, alias)
}

// GetTask implements Tasks: a task is looked for in Local when Primary
// does not have it (it was started while Primary was away) or cannot say.
func (f *Fallback) GetTask(ctx context.Context, id string) (Task, error) {
	p, l, err := f.tasks()
	if err != nil {
		return Task{}, err
	}
	t, err := p.GetTask(ctx, id)
	if err == nil {
		return t, nil
	}
	if lt, lerr := l.GetTask(ctx, id); lerr == nil {
		return lt, nil
	}
	return t, err
}

// FinishTask implements Tasks, in the store that holds the task.
func (f *Fallback) FinishTask(ctx context.Context, id string, end TaskEnd) (Task, error) {
	p, l, err := f.tasks()
	if err != nil {
		return Task{}, err
	}
	if _, err := l.GetTask(ctx, id); err == nil {
		return l.FinishTask(ctx, id, end)
	}
	return p.FinishTask(ctx, id, end)
}

// AwaitTaskInput implements TaskInputs, in the store that holds the task.
func (f *Fallback) AwaitTaskInput(ctx context.Context, id string, input []byte, wait time.Duration) (Task, error) {
	s, err := f.inputs(ctx, id)
	if err != nil {
		return Task{}, err
	}
	return s.AwaitTaskInput(ctx, id, input, wait)
}

// SwapTaskInput implements TaskInputs, in the store that holds the task.
func (f *Fallback) SwapTaskInput(ctx context.Context, id string, prev, next []byte, resume bool) (Task, bool, error) {
	s, err := f.inputs(ctx, id)
	if err != nil {
		return Task{}, false, err
	}
	return s.SwapTaskInput(ctx, id, prev, next, resume)
}

// inputs is the store of f that holds task id, as TaskInputs.
func (f *Fallback) inputs(ctx context.Context, id string) (TaskInputs, error) {
	p, ok1 := f.Primary.(TaskInputs)
	l, ok2 := f.Local.(TaskInputs)
	if !ok1 || !ok2 {
		return nil, errors.New("idempotency: a Fallback store keeps task inputs only when both its stores do")
	}
	if lt, ok := f.Local.(Tasks); ok {
		if _, err := lt.GetTask(ctx, id); err == nil {
			return l, nil
		}
	}
	return p, nil
}

// NoteTask implements TaskNotes, in the store that holds the task.
func (f *Fallback) NoteTask(ctx context.Context, id, msg string) error {
	p, ok1 := f.Primary.(TaskNotes)
	l, ok2 := f.Local.(TaskNotes)
	if !ok1 || !ok2 {
		return nil
	}
	if lt, ok := f.Local.(Tasks); ok {
		if _, err := lt.GetTask(ctx, id); err == nil {
			return l.NoteTask(ctx, id, msg)
		}
	}
	return p.NoteTask(ctx, id, msg)
}

func (f *Fallback) tasks() (Tasks, Tasks, error) {
	p, ok1 := f.Primary.(Tasks)
	l, ok2 := f.Local.(Tasks)
	if !ok1 || !ok2 {
		return nil, nil, errors.New("idempotency: a Fallback store keeps tasks only when both its stores do")
	}
	return p, l, nil
}
