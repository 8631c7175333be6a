package transport

import (
	"context"
	"errors"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// errInputEnded is the cause of a call cancelled because its client's
// input (stdin) ended: closing stdin is how an MCP client shuts a stdio
// server down, so nobody waits for the answer.
var errInputEnded = errors.New("the client closed its input")

// endedInputs cancels the tools/call runs of sessions whose input has
// ended, and every run such a session starts afterwards: a call the SDK
// had queued when the input ended would otherwise never run and never be
// audited. The zero value is ready; it is safe for concurrent use.
type endedInputs struct {
	mu      sync.Mutex
	ended   map[*mcp.ServerSession]bool
	running map[*mcp.ServerSession]map[*context.CancelCauseFunc]struct{}
}

// track returns the context a call of ss runs under (already cancelled
// when ss's input has ended) and the func to call when the call is done.
func (e *endedInputs) track(ctx context.Context, ss *mcp.ServerSession) (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(ctx)
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.ended[ss] {
		cancel(errInputEnded)
		return ctx, func() {}
	}
	if e.running == nil {
		e.running = map[*mcp.ServerSession]map[*context.CancelCauseFunc]struct{}{}
	}
	if e.running[ss] == nil {
		e.running[ss] = map[*context.CancelCauseFunc]struct{}{}
	}
	e.running[ss][&cancel] = struct{}{}
	return ctx, func() {
		e.mu.Lock()
		delete(e.running[ss], &cancel)
		if len(e.running[ss]) == 0 {
			delete(e.running, ss)
		}
		e.mu.Unlock()
		cancel(nil)
	}
}

// end cancels ss's calls, those running and those to come.
func (e *endedInputs) end(ss *mcp.ServerSession) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.ended == nil {
		e.ended = map[*mcp.ServerSession]bool{}
	}
	e.ended[ss] = true
	for cancel := range e.running[ss] {
		(*cancel)(errInputEnded)
	}
}

// forget drops what is kept of ss, once it has closed.
func (e *endedInputs) forget(ss *mcp.ServerSession) {
	e.mu.Lock()
	defer e.mu.Unlock()
	delete(e.ended, ss)
	delete(e.running, ss)
}
