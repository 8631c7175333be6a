package transport

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"sync"

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
	owner    map[jsonrpc.ID]int // requests in flight → the kind that has them
	routed   chan struct{}      // closed when the router has stopped
}

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
	ss := &StdioSession{s: s, base: c.(*lineConn), owner: map[jsonrpc.ID]int{}, routed: make(chan struct{})}
	go ss.route(ctx)
	return ss, nil
}

// route hands each message to its session, opening the session first.
func (ss *StdioSession) route(ctx context.Context) {
	defer close(ss.routed)
	for {
		msg, err := ss.base.Read(ctx)
		if err != nil {
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
				ss.mu.Unlock()
			}
		case carriesVersion(req.Params):
			kind = kindStateless
		}
		if req.ID.IsValid() {
			ss.mu.Lock()
			ss.owner[req.ID] = kind
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

// written forgets a request once its response is out.
func (ss *StdioSession) written(msg jsonrpc.Message) {
	if resp, ok := msg.(*jsonrpc.Response); ok {
		ss.mu.Lock()
		delete(ss.owner, resp.ID)
		ss.mu.Unlock()
	}
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
	err := c.ss.base.Write(ctx, msg)
	c.ss.written(msg)
	return err
}

// Close ends this session's view; the input is closed when the
// StdioSession closes.
func (c *splitConn) Close() error {
	c.end(io.EOF)
	return nil
}

// SessionID implements mcp.Connection: stdio has no session id.
func (c *splitConn) SessionID() string { return "" }
