package transport

import (
	"context"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolhost/toolhost/idempotency"
)

// Pushed questions (2025-11-25). The revision's Tasks say a requestor
// SHOULD call tasks/result on input_required, and toolhost asks there;
// they also say clients should expect a task's messages on any stream,
// and some (the TypeScript SDK's ext-tasks) only poll tasks/get and wait
// for the questions to come. So when a task parks while the session that
// started it is open, the server asks at once on that session
// (elicitation/create naming the task; over HTTP on its GET stream). One
// dialog at a time: a tasks/result that arrives meanwhile stops the push
// (the client is sent notifications/cancelled for it) and asks on its own
// stream, where the client now listens.

// taskPushes are the pushes in flight on this server, by task id.
type taskPushes struct {
	mu sync.Mutex
	m  map[string]*taskPush
}

type taskPush struct {
	cancel context.CancelFunc
	done   chan struct{}
}

// pushTaskInput asks the questions of task id on session ss, apart from
// any request, for as long as the task waits.
func (s *Server) pushTaskInput(ss *mcp.ServerSession, extra *mcp.RequestExtra, caller, id string) {
	ctx, cancel := context.WithTimeout(context.Background(), s.sealer.ttl)
	p := &taskPush{cancel: cancel, done: make(chan struct{})}
	s.pushes.mu.Lock()
	if s.pushes.m == nil {
		s.pushes.m = map[string]*taskPush{}
	}
	if old := s.pushes.m[id]; old != nil {
		old.cancel()
	}
	s.pushes.m[id] = p
	s.pushes.mu.Unlock()
	go func() {
		defer close(p.done)
		defer cancel()
		defer func() {
			s.pushes.mu.Lock()
			if s.pushes.m[id] == p {
				delete(s.pushes.m, id)
			}
			s.pushes.mu.Unlock()
		}()
		t, err := s.d.Tasks().GetTask(ctx, id)
		if err != nil || t.Status != idempotency.TaskInputRequired {
			return
		}
		if err := s.elicitTask(ctx, taskAsker{caller: caller, session: ss, extra: extra}, t); err != nil {
			s.logger.Debug("task input not pushed", "task_id", id, "err", err)
		}
	}()
}

// stopPush stops the push of task id, if one is in flight, and waits for
// it to end; it reports whether there was one.
func (s *Server) stopPush(id string) bool {
	s.pushes.mu.Lock()
	p := s.pushes.m[id]
	s.pushes.mu.Unlock()
	if p == nil {
		return false
	}
	p.cancel()
	<-p.done
	return true
}
