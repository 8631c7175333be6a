package transport

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// StdioSession is one stdio connection served as two SDK sessions that
// share its lines: a stateless one for the requests that carry their
// protocol version in _meta (2026-07-28), and a legacy one for everything
// else (initialize and the session it opens). The SDK keeps one state per
// session and records a stateless request as the session's initialize, so
// on one session `server/discover` followed by `initialize` — what the AI
// SDK's client sends when discover is slow to answer — was refused as a
// duplicate initialize. Each session is opened by its first message.
//
// It is safe for concurrent use.
type StdioSession struct {
	s    *Server
	base *lineConn

	mu       sync.Mutex
	sessions [2]*mcp.ServerSession // by kind; nil until its first message
	conns    [2]*splitConn
	owner    map[jsonrpc.ID]int  // requests in flight → the kind that has them
	calls    map[jsonrpc.ID]bool // the tools/call among them
	closing  bool                // the input has ended
	quiet    chan struct{}       // closed when closing and no call is left
	routed   chan struct{}       // closed when the router has stopped
}

// inputEndGrace bounds how long the end of input waits for the calls it
// cancelled to finish (a guest stops at once when cancelled; this is for
// a host call that does not).
const inputEndGrace = 10 * time.Second

const (
	kindLegacy = iota
	kindStateless
)

// ConnectStdio serves t as a StdioSession until its input ends or Close.
func (s *Server) ConnectStdio(ctx context.Context, t *StdioTransport) (*StdioSession, error) {
	c, err := t.Connect(ctx)
	if err != nil {
		return nil, err
	}
	ss := &StdioSession{s: s, base: c.(*lineConn), owner: map[jsonrpc.ID]int{},
		calls: map[jsonrpc.ID]bool{}, quiet: make(chan struct{}), routed: make(chan struct{})}
	go ss.route(ctx)
	return ss, nil
}

// route hands each message to its session, opening the session first.
func (ss *StdioSession) route(ctx context.Context) {
	defer close(ss.routed)
	for {
		msg, err := ss.base.Read(ctx)
		if err != nil {
			if errors.Is(err, io.EOF) {
				ss.endCalls()
			}
			ss.mu.Lock()
			conns := ss.conns
			ss.mu.Unlock()
			for _, c := range conns {
				if c != nil {
					c.end(err)
				}
			}
			return
		}
		c, err := ss.connFor(ctx, msg)
		if err != nil {
			ss.s.logger.Warn("stdio: opening an MCP session failed", "err", err)
			continue
		}
		c.deliver(msg)
	}
}

// connFor is the connection of the session msg belongs to.
func (ss *StdioSession) connFor(ctx context.Context, msg jsonrpc.Message) (*splitConn, error) {
	kind := kindLegacy
	if req, ok := msg.(*jsonrpc.Request); ok {
		switch {
		case req.Method == "notifications/cancelled":
			if id, ok := cancelledID(req.Params); ok {
				ss.mu.Lock()
				if k, ok := ss.owner[id]; ok {
					kind = k
				}
				// Its answer is dropped (countingConn): the end of input
				// has nothing to wait for. The session waits for its run.
				if ss.calls[id] {
					delete(ss.calls, id)
					if ss.closing && len(ss.calls) == 0 {
						close(ss.quiet)
					}
				}
				ss.mu.Unlock()
			}
		case carriesVersion(req.Params):
			kind = kindStateless
		}
		if req.ID.IsValid() {
			ss.mu.Lock()
			ss.owner[req.ID] = kind
			if req.Method == "tools/call" {
				ss.calls[req.ID] = true
			}
			ss.mu.Unlock()
		}
	}
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if c := ss.conns[kind]; c != nil {
		return c, nil
	}
	c := &splitConn{ss: ss, incoming: make(chan jsonrpc.Message, 1), ended: make(chan struct{})}
	sess, err := ss.s.Connect(ctx, connTransport{c})
	if err != nil {
		return nil, err
	}
	ss.conns[kind], ss.sessions[kind] = c, sess
	return c, nil
}

// carriesVersion reports whether params._meta names a protocol version:
// the mark of a stateless (2026-07-28) request.
func carriesVersion(params json.RawMessage) bool {
	if len(params) == 0 {
		return false
	}
	var p struct {
		Meta map[string]json.RawMessage `json:"_meta"`
	}
	if json.Unmarshal(params, &p) != nil {
		return false
	}
	_, ok := p.Meta[mcp.MetaKeyProtocolVersion]
	return ok
}

// Wait returns when the input has ended and every session has finished.
func (ss *StdioSession) Wait() error {
	<-ss.routed
	ss.mu.Lock()
	sessions := ss.sessions
	ss.mu.Unlock()
	var errs []error
	for _, sess := range sessions {
		if sess != nil {
			errs = append(errs, sess.Wait())
			ss.s.endedInputs.forget(sess)
		}
	}
	return errors.Join(errs...)
}

// Close ends both sessions and the connection. It may be called more than once.
func (ss *StdioSession) Close() error {
	err := ss.base.Close()
	<-ss.routed
	ss.mu.Lock()
	sessions := ss.sessions
	ss.mu.Unlock()
	for _, sess := range sessions {
		if sess != nil {
			_ = sess.Close()
		}
	}
	return err
}

// endCalls handles the end of input with tools/call requests in flight:
// closing stdin is how an MCP client shuts a stdio server down, so they
// are cancelled at once — those running, and those the SDK has queued,
// as they start — audited as cancelled and not answered, and only then
// do the sessions see the end of input (the SDK, seeing it first, would
// drop a queued call without a record). The wait is bounded by
// inputEndGrace.
func (ss *StdioSession) endCalls() {
	ss.mu.Lock()
	ss.closing = true
	sessions := ss.sessions
	if len(ss.calls) == 0 {
		close(ss.quiet)
	}
	ss.mu.Unlock()
	for _, sess := range sessions {
		if sess != nil {
			ss.s.endedInputs.end(sess)
		}
	}
	t := time.NewTimer(inputEndGrace)
	defer t.Stop()
	select {
	case <-ss.quiet:
	case <-t.C:
		ss.s.logger.Warn("stdio: calls still running after the end of input", "grace", inputEndGrace)
	}
}

// answered forgets a request once its response is written, and says
// whether that response is to go out: not for a call the end of input
// cancelled.
func (ss *StdioSession) answered(msg jsonrpc.Message) bool {
	resp, ok := msg.(*jsonrpc.Response)
	if !ok {
		return true
	}
	ss.mu.Lock()
	defer ss.mu.Unlock()
	delete(ss.owner, resp.ID)
	if !ss.calls[resp.ID] {
		return true
	}
	delete(ss.calls, resp.ID)
	if ss.closing && len(ss.calls) == 0 {
		close(ss.quiet)
	}
	return !ss.closing
}

// connTransport hands the SDK one prepared connection.
type connTransport struct{ c mcp.Connection }

func (t connTransport) Connect(context.Context) (mcp.Connection, error) { return t.c, nil }

// splitConn is one session's view of a StdioSession: the messages routed
// to it, and writes to the shared output.
type splitConn struct {
	ss       *StdioSession
	incoming chan jsonrpc.Message

	endOnce sync.Once
	ended   chan struct{}
	endErr  error
}

func (c *splitConn) deliver(msg jsonrpc.Message) {
	select {
	case c.incoming <- msg:
	case <-c.ended:
	}
}

func (c *splitConn) end(err error) {
	c.endOnce.Do(func() {
		c.endErr = err
		close(c.ended)
	})
}

// Read returns the next message routed here; at the end of input, the
// messages already routed first, then the input's error (io.EOF).
func (c *splitConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	select {
	case msg := <-c.incoming:
		return msg, nil
	default:
	}
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case msg := <-c.incoming:
		return msg, nil
	case <-c.ended:
		return nil, c.endErr
	}
}

// Write sends msg on the shared output.
func (c *splitConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if !c.ss.answered(msg) {
		return nil
	}
	return c.ss.base.Write(ctx, msg)
}

// Close ends this session's view; the input is closed when the
// StdioSession closes.
func (c *splitConn) Close() error {
	c.end(io.EOF)
	return nil
}

// SessionID implements mcp.Connection: stdio has no session id.
func (c *splitConn) SessionID() string { return "" }
