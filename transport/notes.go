package transport

import (
	"context"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolhost/toolhost/abi"
	"github.com/toolhost/toolhost/internal/guestnote"
)

// clientNotes carries one tools/call's guest notes (guest.Progress,
// guest.Log) to the client that made it, on the request's own stream:
// progress as notifications/progress when the request carried a progress
// token, log messages as notifications/message when the client set a
// level (logging/setLevel before 2026-07-28, the request's _meta level at
// 2026-07-28; the SDK's Session.Log checks it). The host has already
// checked, bounded and logged them. Sending is best effort: a client gone
// away must not fail its call.
//
// It is safe for concurrent use: a keyed execution's attempts, or a plan's
// steps, may report from more than one goroutine.
type clientNotes struct {
	ctx       context.Context // the request's: the SDK finds its stream and log level there
	session   *mcp.ServerSession
	token     any    // nil: the caller gets no progress
	tool      string // the name the client called: the messages' logger
	requestID string
	task      *taskStatus // nil unless the call runs as a task

	mu   sync.Mutex
	sent bool
	last float64
}

// withClientNotes returns ctx carrying the sink of a tools/call request
// (see clientNotes); progress only when progress is set (a toolhost.plan
// call's progress token carries plan events).
func withClientNotes(ctx context.Context, req *mcp.CallToolRequest, requestID string, progress bool) context.Context {
	if req == nil || req.Session == nil || req.Params == nil {
		return ctx
	}
	n := &clientNotes{ctx: ctx, session: req.Session, tool: req.Params.Name, requestID: requestID, task: taskStatusFrom(ctx)}
	if progress {
		n.token = req.Params.GetProgressToken()
	}
	return guestnote.WithSink(ctx, n)
}

// Progress sends a notifications/progress. MCP wants the value to grow
// with each one; the host sees to it within an attempt, and this across a
// call's attempts (a retry starts its progress over). A task's call also
// shows it as the task's statusMessage.
func (n *clientNotes) Progress(done, total float64, msg string) {
	n.task.set(progressStatus(done, total, msg))
	if n.token == nil || n.over() {
		return
	}
	n.mu.Lock()
	defer n.mu.Unlock() // sent under the lock: in the order accepted
	if n.sent && done <= n.last {
		return
	}
	n.sent, n.last = true, done
	_ = n.session.NotifyProgress(n.ctx, &mcp.ProgressNotificationParams{
		ProgressToken: n.token, Progress: done, Total: total, Message: msg,
		Meta: withRelatedTask(n.ctx, mcp.Meta{MetaRequestID: n.requestID}),
	})
}

// Log sends a notifications/message whose logger is the tool's name and
// whose data is the guest's message; a task's call also shows it as the
// task's statusMessage.
func (n *clientNotes) Log(level abi.LogLevel, msg string) {
	n.task.set(msg)
	if n.over() {
		return
	}
	_ = n.session.Log(n.ctx, &mcp.LoggingMessageParams{
		Level: mcp.LoggingLevel(level.String()), Logger: n.tool, Data: msg,
		Meta: withRelatedTask(n.ctx, mcp.Meta{MetaRequestID: n.requestID}),
	})
}

// forStep is the sink of one toolhost.plan step: the plan call's, with
// the step's tool as the logger. Any other sink is returned as it is.
func forStep(s guestnote.Sink, tool string) guestnote.Sink {
	n, ok := s.(*clientNotes)
	if !ok {
		return s
	}
	return &clientNotes{ctx: n.ctx, session: n.session, tool: tool, requestID: n.requestID, task: n.task}
}

// over reports whether the request has ended (answered, cancelled or
// dropped; the SDK cancels its context once it has replied). A keyed
// execution outlives the request that started it when that caller leaves
// and others wait on: its notes then go to no one, since a notification
// for an answered request is an error to some clients (the TypeScript
// SDK's "unknown token").
func (n *clientNotes) over() bool { return n.ctx.Err() != nil }
