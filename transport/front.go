package transport

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// front is the one handler at /mcp. It reads a POST's message before the
// SDK does, to
//   - route it: a request at 2026-07-28 (by its Mcp-Protocol-Version
//     header or its _meta) goes to the stateless handler, anything else to
//     the session handler, as 2025 clients have always been served;
//   - refuse what the SDK would answer loosely (see ids.go for ids): an
//     unserved method gets -32601 as a JSON-RPC error, and a 2025 request
//     other than initialize without Mcp-Session-Id gets HTTP 400.
//
// Anything it does not understand (a batch, invalid JSON) goes to the SDK
// unchanged, which answers it as before.
type front struct {
	s         *Server
	sessions  http.Handler // 2025 clients: initialize + Mcp-Session-Id
	stateless http.Handler // 2026-07-28 clients
	maxBody   int64
}

// message is what front reads of a single JSON-RPC message.
type message struct {
	id      json.RawMessage // nil when absent
	method  string
	version string // params._meta["io.modelcontextprotocol/protocolVersion"]
	hasID   bool
	// isRequest: the message has a method (a request or notification),
	// not a result or error.
	isRequest bool
	fields    map[string]json.RawMessage
	params    map[string]json.RawMessage // nil when params is no JSON object
}

func (f *front) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	header := r.Header.Get("Mcp-Protocol-Version")
	// What is not a JSON POST gets the SDK's answer (405, 415, a GET
	// stream) untouched.
	if ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); r.Method != http.MethodPost || ct != "application/json" {
		f.route(isStateless(header), false).ServeHTTP(w, r)
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, f.maxBody))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			http.Error(w, fmt.Sprintf("request body exceeds %d bytes", mbe.Limit), http.StatusRequestEntityTooLarge)
			return
		}
		http.Error(w, "reading the request body: "+err.Error(), http.StatusBadRequest)
		return
	}
	msg, single := readMessage(body)
	read := body
	stateless := isStateless(header) || (single && isStateless(msg.version))
	// A message without a method is the client's answer to a request of
	// the server's: its id is the server's own, and it has no method to
	// check.
	if single && msg.hasID && msg.isRequest {
		var ok bool
		if body, w, ok = f.check(w, r, msg, body, stateless); !ok {
			return
		}
	}
	if single && msg.method == "notifications/cancelled" {
		body = rewriteCancelled(msg.fields, body)
	}
	if single && msg.method == "tools/call" {
		body = liftTaskBody(msg, body) // see tasks.go
	}
	fb := &frontBody{}
	fb.Reset(body)
	// What front read is what the cancel filter would read again, unless
	// a rewrite above changed the body.
	if single && msg.isRequest && sameBytes(body, read) {
		fb.msg = msg.request()
	}
	r.Body = fb
	r.ContentLength = int64(len(body))
	f.route(stateless, single && msg.method == "subscriptions/listen").ServeHTTP(w, r)
}

// route picks the handler. Calls count as in flight for Drain; a
// subscriptions/listen stream, like a GET stream, never ends by itself and
// is not counted (Drain closes it with its session).
func (f *front) route(stateless, listen bool) http.Handler {
	h := f.sessions
	if stateless {
		h = f.stateless
	}
	if listen {
		return h
	}
	return f.s.inflight.wrap(h)
}

// check applies the id, method and session rules to one request. It
// returns the body and writer to use, or false when it has answered.
func (f *front) check(w http.ResponseWriter, r *http.Request, msg message, body []byte, stateless bool) ([]byte, http.ResponseWriter, bool) {
	verdict, why := classifyID(msg.id)
	switch verdict {
	case idRefuse:
		writeError(w, http.StatusBadRequest, nil, jsonrpc.CodeInvalidRequest, "invalid request id: "+why)
		return nil, nil, false
	case idRewrite:
		msg.fields["id"] = surrogate(msg.id)
		body, _ = json.Marshal(msg.fields)
		w = newIDRestorer(w, msg.id)
	}
	if !stateless && msg.method != "initialize" && r.Header.Get("Mcp-Session-Id") == "" {
		writeError(w, http.StatusBadRequest, msg.id, jsonrpc.CodeInvalidRequest,
			fmt.Sprintf("Bad Request: %q needs the Mcp-Session-Id header this server sent with its initialize answer (or use protocol version %s, which has no sessions)", msg.method, Revision20260728))
		return nil, nil, false
	}
	if !serves(msg.method, stateless) {
		// 2026-07-28 answers an unknown method with HTTP 404; before it, a
		// JSON-RPC error is an ordinary answer.
		status := http.StatusOK
		if stateless {
			status = http.StatusNotFound
		}
		writeError(w, status, msg.id, jsonrpc.CodeMethodNotFound, methodNotFound(msg.method, stateless))
		return nil, nil, false
	}
	if what, ok := f.s.offering(msg.method); !ok && (stateless || !f.s.wasToldByID(r.Header.Get("Mcp-Session-Id"), what)) {
		status := http.StatusOK
		if stateless {
			status = http.StatusNotFound
		}
		writeError(w, status, msg.id, jsonrpc.CodeMethodNotFound, noOffers(msg.method, what))
		return nil, nil, false
	}
	return body, w, true
}

func methodNotFound(method string, stateless bool) string {
	if _, ok := served[method]; ok {
		other := Revision20260728
		if stateless {
			other = "2025-11-25 and earlier"
		}
		return fmt.Sprintf("method %q not found at this protocol version: it belongs to %s", method, other)
	}
	return unservedMethod(method)
}

// unservedMethod is the message for a method no revision serves. It names
// what toolhost does serve, so a client author can tell a typo from a
// feature toolhost lacks (completion, sampling, roots).
func unservedMethod(method string) string {
	return fmt.Sprintf("method %q not found: toolhost serves tools, resources, prompts and tasks, not this method", method)
}

// readMessage parses a single JSON-RPC message. single is false for a
// batch or anything that is not a JSON object. Its params are decoded
// once, here, for the protocol version and for liftTaskBody.
func readMessage(body []byte) (message, bool) {
	var m message
	if err := json.Unmarshal(body, &m.fields); err != nil || m.fields == nil {
		return m, false
	}
	if id, ok := m.fields["id"]; ok && string(bytes.TrimSpace(id)) != "null" {
		m.id, m.hasID = id, true
	}
	if raw, ok := m.fields["method"]; ok {
		m.isRequest = true
		_ = json.Unmarshal(raw, &m.method)
	}
	if raw, ok := m.fields["params"]; ok && json.Unmarshal(raw, &m.params) == nil {
		var meta map[string]json.RawMessage
		if json.Unmarshal(m.params["_meta"], &meta) == nil {
			_ = json.Unmarshal(meta["io.modelcontextprotocol/protocolVersion"], &m.version)
		}
	}
	return m, true
}

// request is m as jsonrpc.DecodeMessage reads it, for the cancel filter;
// nil when they could disagree (a version tag other than "2.0", an id
// that is neither a number nor a string), which leaves the filter to
// decode the body itself.
func (m message) request() *jsonrpc.Request {
	if string(m.fields["jsonrpc"]) != `"2.0"` {
		return nil
	}
	req := &jsonrpc.Request{Method: m.method, Params: m.fields["params"]}
	if m.hasID {
		var v any
		if json.Unmarshal(m.id, &v) != nil {
			return nil
		}
		id, err := jsonrpc.MakeID(v)
		if err != nil {
			return nil
		}
		req.ID = id
	}
	return req
}

// frontBody is the body front passes on: the bytes it read, and the
// message it read in them when the cancel filter may use that instead of
// decoding them again.
type frontBody struct {
	bytes.Reader
	msg *jsonrpc.Request // nil: not known
}

// Close is a no-op: front has read and closed the request's own body.
func (*frontBody) Close() error { return nil }

// sameBytes reports whether a and b are one slice (not merely equal
// bytes): whether no rewrite replaced the body.
func sameBytes(a, b []byte) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
}

// writeError answers with one JSON-RPC error; id nil means null.
func writeError(w http.ResponseWriter, status int, id json.RawMessage, code int64, msg string) {
	if id == nil {
		id = json.RawMessage("null")
	}
	b, _ := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   jsonrpc.Error   `json:"error"`
	}{"2.0", id, jsonrpc.Error{Code: code, Message: msg}})
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

// callerLimited caps one caller's stateless requests in flight. Each is a
// short-lived session of its own, and subscriptions/listen holds one for
// as long as the client listens, so this is the per-caller form of
// MaxSessions. Over it: HTTP 429 with a JSON-RPC error.
func (s *Server) callerLimited(h http.Handler) http.Handler {
	if s.opts.MaxStreamsPerCaller <= 0 {
		return h
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		caller := httpCaller(r)
		if !s.streams.enter(caller) {
			w.Header().Set("Retry-After", "1")
			writeError(w, http.StatusTooManyRequests, nil, jsonrpc.CodeInvalidRequest,
				fmt.Sprintf("caller %q already has %d requests open, this server's limit per caller; close a subscriptions/listen stream or wait for a call to finish", caller, s.opts.MaxStreamsPerCaller))
			return
		}
		defer s.streams.exit(caller)
		h.ServeHTTP(w, r)
	})
}

// statelessHandler serves 2026-07-28: each request is a session of its
// own, closed when it is answered.
func (s *Server) statelessHandler() http.Handler {
	return mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s.mcp }, &mcp.StreamableHTTPOptions{
		Stateless:           true,
		Logger:              s.logger,
		MaxRequestBodyBytes: s.opts.MaxBodyBytes,
		// The POST is the whole life of a stateless request: a client
		// that drops it has cancelled it.
		PropagateRequestCancellation: true,
	})
}
