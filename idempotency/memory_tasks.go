package idempotency

import (
	"bytes"
	"context"
	"sync"
	"time"
)

// taskTable is Memory's task state. Tasks are bounded as keys are: each
// counts as one key and its result's bytes against the store's Limits, in
// total and per caller, apart from the idempotency keys themselves.
type taskTable struct {
	mu      sync.Mutex
	byID    map[string]*taskEntry
	aliases map[string]string // alias → task id
	callers map[string]*usage // usage.kept unused here
	total   usage
	ended   []*taskEntry // terminal tasks in expiry order (one TTL for all), from head
	head    int
	expiry  expiryTimer // fires when the oldest terminal task expires
}

type taskEntry struct {
	Task
	alias string // "" once unaliased
	bytes int64
	wait  *time.Timer // forgets the task when its wait for input ends
}

const taskOverhead = 256

// CreateTask implements Tasks.
func (m *Memory) CreateTask(_ context.Context, t Task, alias string) (Task, bool, error) {
	tt := &m.tasks
	now := time.Now()
	tt.mu.Lock()
	defer tt.mu.Unlock()
	tt.evict(now)
	if tt.byID == nil {
		tt.byID, tt.aliases, tt.callers = map[string]*taskEntry{}, map[string]string{}, map[string]*usage{}
	}
	if alias != "" {
		if id, ok := tt.aliases[alias]; ok {
			e := tt.byID[id]
			if e.Fingerprint != t.Fingerprint {
				return Task{}, false, &ConflictError{Key: alias}
			}
			return e.copy(), false, nil
		}
	}
	e := &taskEntry{Task: t, alias: alias, bytes: int64(len(t.ID)+len(alias)+len(t.Fingerprint)) + taskOverhead}
	e.Status, e.Created, e.Updated, e.Expires = TaskWorking, now, now, time.Time{}
	if err := tt.admit(m.limits, e); err != nil {
		return Task{}, false, err
	}
	tt.byID[t.ID] = e
	if alias != "" {
		tt.aliases[alias] = t.ID
	}
	tt.charge(e.Caller, 1, e.bytes)
	return e.copy(), true, nil
}

// GetTask implements Tasks.
func (m *Memory) GetTask(_ context.Context, id string) (Task, error) {
	tt := &m.tasks
	tt.mu.Lock()
	defer tt.mu.Unlock()
	tt.evict(time.Now())
	if e, ok := tt.byID[id]; ok {
		return e.copy(), nil
	}
	return Task{}, taskNotFound(id)
}

// FinishTask implements Tasks.
func (m *Memory) FinishTask(_ context.Context, id string, end TaskEnd) (Task, error) {
	tt := &m.tasks
	now := time.Now()
	tt.mu.Lock()
	defer tt.mu.Unlock()
	tt.evict(now)
	e, ok := tt.byID[id]
	if !ok {
		return Task{}, taskNotFound(id)
	}
	if e.Status.Terminal() {
		return e.copy(), nil
	}
	tt.dropInput(e)
	e.Status, e.Message, e.Result = end.Status, end.Message, end.Result
	e.Updated, e.Expires = now, now.Add(m.ttl)
	if end.Unalias {
		tt.unalias(e)
	}
	e.bytes += int64(len(end.Result) + len(end.Message))
	tt.charge(e.Caller, 0, int64(len(end.Result)+len(end.Message)))
	tt.ended = append(tt.ended, e)
	tt.arm(now)
	return e.copy(), nil
}

// NoteTask implements TaskNotes. The message is not charged against the
// limits: it replaces the last, and the host bounds its size.
func (m *Memory) NoteTask(_ context.Context, id, msg string) error {
	tt := &m.tasks
	tt.mu.Lock()
	defer tt.mu.Unlock()
	if e, ok := tt.byID[id]; ok && e.Status == TaskWorking {
		e.Message, e.Updated = msg, time.Now()
	}
	return nil
}

// AwaitTaskInput implements TaskInputs. The input counts against the
// caller's bytes while the task waits.
func (m *Memory) AwaitTaskInput(_ context.Context, id string, input []byte, wait time.Duration) (Task, error) {
	tt := &m.tasks
	now := time.Now()
	tt.mu.Lock()
	defer tt.mu.Unlock()
	tt.evict(now)
	e, ok := tt.byID[id]
	if !ok {
		return Task{}, taskNotFound(id)
	}
	if e.Status != TaskWorking {
		return e.copy(), nil
	}
	e.Status, e.Input, e.Updated, e.Expires = TaskInputRequired, bytes.Clone(input), now, now.Add(wait)
	e.bytes += int64(len(input))
	tt.charge(e.Caller, 0, int64(len(input)))
	e.wait = time.AfterFunc(wait, func() { tt.forgetWaiting(e) })
	return e.copy(), nil
}

// SwapTaskInput implements TaskInputs.
func (m *Memory) SwapTaskInput(_ context.Context, id string, prev, next []byte, resume bool) (Task, bool, error) {
	tt := &m.tasks
	now := time.Now()
	tt.mu.Lock()
	defer tt.mu.Unlock()
	tt.evict(now)
	e, ok := tt.byID[id]
	if !ok {
		return Task{}, false, taskNotFound(id)
	}
	if e.Status != TaskInputRequired || !bytes.Equal(e.Input, prev) {
		return e.copy(), false, nil
	}
	e.Updated = now
	if resume {
		tt.dropInput(e)
		e.Status, e.Expires = TaskWorking, time.Time{}
		return e.copy(), true, nil
	}
	d := int64(len(next) - len(e.Input))
	e.Input = bytes.Clone(next)
	e.bytes += d
	tt.charge(e.Caller, 0, d)
	return e.copy(), true, nil
}

// dropInput ends e's wait for input, if it waits, and frees its input.
func (tt *taskTable) dropInput(e *taskEntry) {
	if e.wait != nil {
		e.wait.Stop()
		e.wait = nil
	}
	if n := int64(len(e.Input)); n > 0 {
		e.bytes -= n
		tt.charge(e.Caller, 0, -n)
	}
	e.Input = nil
}

// forgetWaiting drops a task whose wait for input ended unanswered, as
// an expired task is dropped; one that was answered meanwhile (or waits
// again, with a later end) is left.
func (tt *taskTable) forgetWaiting(e *taskEntry) {
	tt.mu.Lock()
	defer tt.mu.Unlock()
	if tt.byID[e.ID] != e || e.Status != TaskInputRequired || time.Now().Before(e.Expires) {
		return
	}
	tt.unalias(e)
	delete(tt.byID, e.ID)
	tt.charge(e.Caller, -1, -e.bytes)
}

func (e *taskEntry) copy() Task {
	t := e.Task
	t.Result = append([]byte(nil), e.Result...)
	t.Input = bytes.Clone(e.Input)
	return t
}

// admit checks a new task against the limits, per caller first.
func (tt *taskTable) admit(l Limits, e *taskEntry) error {
	l = l.withDefaults()
	u := tt.callers[e.Caller]
	if u == nil {
		u = &usage{}
	}
	refuse := func(limit string, held, max int64) error {
		return &LimitError{Limit: "tasks: " + limit, Caller: e.Caller, Held: held, Max: max}
	}
	switch {
	case u.keys >= l.MaxKeysPerCaller:
		return refuse("keys per caller", int64(u.keys), int64(l.MaxKeysPerCaller))
	case u.bytes+e.bytes > l.MaxBytesPerCaller:
		return refuse("bytes per caller", u.bytes, l.MaxBytesPerCaller)
	case tt.total.keys >= l.MaxKeys:
		return refuse("keys", int64(tt.total.keys), int64(l.MaxKeys))
	case tt.total.bytes+e.bytes > l.MaxBytes:
		return refuse("bytes", tt.total.bytes, l.MaxBytes)
	}
	return nil
}

func (tt *taskTable) charge(caller string, n int, bytes int64) {
	u := tt.callers[caller]
	if u == nil {
		u = &usage{}
		tt.callers[caller] = u
	}
	u.keys += n
	u.bytes += bytes
	tt.total.keys += n
	tt.total.bytes += bytes
	if u.keys == 0 {
		delete(tt.callers, caller)
	}
}

func (tt *taskTable) unalias(e *taskEntry) {
	if e.alias != "" && tt.aliases[e.alias] == e.ID {
		delete(tt.aliases, e.alias)
	}
	e.alias = ""
}

// evict forgets the terminal tasks expired at now; they are in expiry
// order, so this costs only what it drops (and, now and then, moving the
// queue's live half down so that it does not grow).
func (tt *taskTable) evict(now time.Time) {
	for ; tt.head < len(tt.ended) && !now.Before(tt.ended[tt.head].Expires); tt.head++ {
		e := tt.ended[tt.head]
		tt.unalias(e)
		delete(tt.byID, e.ID)
		tt.charge(e.Caller, -1, -e.bytes)
		tt.ended[tt.head] = nil
	}
	switch {
	case tt.head == len(tt.ended):
		tt.ended, tt.head = tt.ended[:0], 0
	case tt.head > 64 && tt.head*2 > len(tt.ended):
		tt.ended = append(tt.ended[:0:0], tt.ended[tt.head:]...)
		tt.head = 0
	}
}

// arm sets a timer for the oldest terminal task, so expired results leave
// memory even when no request comes.
func (tt *taskTable) arm(now time.Time) {
	if tt.head < len(tt.ended) {
		tt.expiry.set(tt.ended[tt.head].Expires, now, tt.expire)
	}
}

func (tt *taskTable) expire() {
	now := time.Now()
	tt.mu.Lock()
	defer tt.mu.Unlock()
	tt.expiry.fired()
	tt.evict(now)
	tt.arm(now)
}

// TaskCount returns the tasks held (working or kept), for tests and
// metrics.
func (m *Memory) TaskCount() int {
	m.tasks.mu.Lock()
	defer m.tasks.mu.Unlock()
	return len(m.tasks.byID)
}
