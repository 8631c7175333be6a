package transport

import (
	"context"
	"strconv"
	"sync"
	"time"

	"github.com/toolhost/toolhost/idempotency"
)

// taskStatus shows a task's latest guest note (progress or log message)
// as its statusMessage: a task outlives its request, so tasks/get is
// where a client that polls learns how far the call has got. The notes
// come at the guest's pace (the host rate-limits progress) and the store
// may be Redis, so writes are coalesced: at most one is in flight per
// task, and it carries the latest note; those in between are skipped.
type taskStatus struct {
	store idempotency.TaskNotes
	id    string

	mu      sync.Mutex
	pending string
	fresh   bool // pending is not written yet
	writing bool // a writer goroutine runs
}

type taskStatusKey struct{}

// withTaskStatus returns ctx carrying the status writer of task id, when
// the task store keeps notes.
func withTaskStatus(ctx context.Context, tasks idempotency.Tasks, id string) context.Context {
	store, ok := tasks.(idempotency.TaskNotes)
	if !ok {
		return ctx
	}
	return context.WithValue(ctx, taskStatusKey{}, &taskStatus{store: store, id: id})
}

func taskStatusFrom(ctx context.Context) *taskStatus {
	t, _ := ctx.Value(taskStatusKey{}).(*taskStatus)
	return t
}

// set makes msg the task's message, soon; it never blocks the guest.
func (t *taskStatus) set(msg string) {
	if t == nil || msg == "" {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.pending, t.fresh = msg, true
	if !t.writing {
		t.writing = true
		go t.write()
	}
}

// last returns the latest note, "" when none came: the task's end
// message keeps it, so that a client that polls only now and then still
// reads the tool's last word (how far a call that timed out had got).
func (t *taskStatus) last() string {
	if t == nil {
		return ""
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.pending
}

// withLastNote is end with the task's last note added to its message.
func withLastNote(end idempotency.TaskEnd, t *taskStatus) idempotency.TaskEnd {
	if last := t.last(); last != "" {
		end.Message += " The tool's last note: " + last
	}
	return end
}

// write stores the latest note until none is left unwritten. A store that
// is slow or away costs a bounded wait per note, and the note is lost: the
// task's end will say more.
func (t *taskStatus) write() {
	for {
		t.mu.Lock()
		if !t.fresh {
			t.writing = false
			t.mu.Unlock()
			return
		}
		msg := t.pending
		t.fresh = false
		t.mu.Unlock()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		_ = t.store.NoteTask(ctx, t.id, msg)
		cancel()
	}
}

// progressStatus is a progress note as a status message: the guest's
// words, or its numbers when it sent none.
func progressStatus(done, total float64, msg string) string {
	if msg != "" {
		return msg
	}
	s := strconv.FormatFloat(done, 'g', -1, 64)
	if total > 0 {
		s += " of " + strconv.FormatFloat(total, 'g', -1, 64)
	}
	return s + " done"
}
