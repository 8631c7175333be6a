package transport

import (
	"context"
	"encoding/json"
	"os"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Connect serves one MCP connection over t (stdio, in-memory, or any
// other Transport). A tools/call read from it counts as in flight until
// its response has been written, so Drain never closes the connection
// between a call's end and its answer.
func (s *Server) Connect(ctx context.Context, t mcp.Transport) (*mcp.ServerSession, error) {
	return s.mcp.Connect(ctx, countingTransport{Transport: t, f: &s.inflight}, nil)
}

// ServeStdio speaks MCP on stdin and stdout until the client disconnects
// or ctx ends. Malformed lines are answered and skipped (StdioTransport);
// one line is at most Options.MaxBodyBytes.
func (s *Server) ServeStdio(ctx context.Context) error {
	ss, err := s.ConnectStdio(ctx, &StdioTransport{In: os.Stdin, Out: os.Stdout, MaxLineBytes: int(s.opts.MaxBodyBytes)})
	if err != nil {
		return err
	}
	done := make(chan error, 1)
	go func() { done <- ss.Wait() }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		_ = ss.Close()
		<-done
		return ctx.Err()
	}
}

type countingTransport struct {
	mcp.Transport
	f *inflight
}

func (t countingTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := t.Transport.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &countingConn{Connection: c, f: t.f, pending: map[jsonrpc.ID]bool{}}, nil
}

// countingConn enters the in-flight count when it reads a tools/call and
// exits when it writes the response with the same id (or closes). A
// tools/call the client cancelled (notifications/cancelled naming it)
// gets no response: the SDK writes one for every request, so it is
// dropped here, where the cancellation was read.
type countingConn struct {
	mcp.Connection
	f *inflight

	mu      sync.Mutex
	pending map[jsonrpc.ID]bool // tools/call in flight → cancelled by the client
}

func (c *countingConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	msg, err := c.Connection.Read(ctx)
	req, ok := msg.(*jsonrpc.Request)
	if !ok || err != nil {
		return msg, err
	}
	switch {
	case req.Method == "tools/call" && req.ID.IsValid():
		if params, ok := liftTaskParam(req.Params); ok { // see tasks.go
			req.Params = params
		}
		c.mu.Lock()
		if _, dup := c.pending[req.ID]; !dup {
			c.pending[req.ID] = false
			c.f.enter()
		}
		c.mu.Unlock()
	case req.Method == "notifications/cancelled" && !req.ID.IsValid():
		if id, ok := cancelledID(req.Params); ok {
			c.mu.Lock()
			if _, ok := c.pending[id]; ok {
				c.pending[id] = true
			}
			c.mu.Unlock()
		}
	}
	return msg, err
}

// cancelledID reads the request id a notifications/cancelled names, the
// way the SDK does when it cancels the request's context.
func cancelledID(params json.RawMessage) (jsonrpc.ID, bool) {
	var p struct {
		RequestID any `json:"requestId"`
	}
	if err := json.Unmarshal(params, &p); err != nil || p.RequestID == nil {
		return jsonrpc.ID{}, false
	}
	id, err := jsonrpc.MakeID(p.RequestID)
	return id, err == nil
}

func (c *countingConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	resp, ok := msg.(*jsonrpc.Response)
	if !ok {
		return c.Connection.Write(ctx, msg)
	}
	c.mu.Lock()
	cancelled, pending := c.pending[resp.ID]
	c.mu.Unlock()
	var err error
	if !cancelled {
		err = c.Connection.Write(ctx, msg)
	}
	if pending {
		c.mu.Lock()
		delete(c.pending, resp.ID)
		c.f.exit()
		c.mu.Unlock()
	}
	return err
}

// Close releases what is still pending: those responses will never be
// written.
func (c *countingConn) Close() error {
	c.mu.Lock()
	for id := range c.pending {
		delete(c.pending, id)
		c.f.exit()
	}
	c.mu.Unlock()
	return c.Connection.Close()
}
