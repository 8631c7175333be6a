package transport

import (
	"cmp"
	"context"
	"slices"
	"strings"
	"sync"
	"time"
)

// taskRuns are the tasks running on this server, so that tasks/cancel
// stops one at once and tasks/result hears of its end without polling.
type taskRuns struct {
	mu   sync.Mutex
	runs map[string]*taskRun
}

type taskRun struct {
	cancel context.CancelFunc
	done   chan struct{}
	info   RunningTask
	status *taskStatus // its latest note; nil when the store keeps none
}

func (r *taskRuns) add(id string, cancel context.CancelFunc, info RunningTask, status *taskStatus) *taskRun {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.runs == nil {
		r.runs = map[string]*taskRun{}
	}
	info.ID = id
	run := &taskRun{cancel: cancel, done: make(chan struct{}), info: info, status: status}
	r.runs[id] = run
	return run
}

// RunningTask is an MCP task whose call runs on this server now.
type RunningTask struct {
	ID, Caller string
	// Tool is the manifest name (or toolhost.plan).
	Tool    string
	Started time.Time
	// Note is the tool's latest progress or log note, "" when none came
	// (or the task store keeps no notes).
	Note string
}

// RunningTasks returns the tasks running on this server, oldest first:
// what the console shows. A task of another replica, or one that has
// ended (kept in the task store for its TTL), is not among them.
func (s *Server) RunningTasks() []RunningTask {
	s.taskRuns.mu.Lock()
	out := make([]RunningTask, 0, len(s.taskRuns.runs))
	statuses := make([]*taskStatus, 0, len(s.taskRuns.runs))
	for _, run := range s.taskRuns.runs {
		out = append(out, run.info)
		statuses = append(statuses, run.status)
	}
	s.taskRuns.mu.Unlock()
	for i, st := range statuses {
		out[i].Note = st.last()
	}
	slices.SortFunc(out, func(a, b RunningTask) int { return cmp.Or(a.Started.Compare(b.Started), strings.Compare(a.ID, b.ID)) })
	return out
}

func (r *taskRuns) remove(id string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if run := r.runs[id]; run != nil {
		close(run.done)
		delete(r.runs, id)
	}
}

// get returns the run of a task running here, or nil.
func (r *taskRuns) get(id string) *taskRun {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.runs[id]
}
