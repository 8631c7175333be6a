package governor

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"mime"
	"net"
	"net/http"
	"time"
)

// JSON-RPC 2.0 methods served by RPCHandler.
const (
	MethodAcquire = "governor.acquire"
	MethodReport  = "governor.report"
	MethodStatus  = "governor.status"
)

// AcquireParams are governor.acquire's params.
type AcquireParams struct {
	Quota string `json:"quota"`
	// Priority is a class name; empty means normal.
	Priority string `json:"priority,omitempty"`
	// Cost is the tokens drawn; 0 means 1.
	Cost int64 `json:"cost,omitempty"`
	// Agent names who draws: the draw counts under it in the quota's
	// per-agent usage (governor.status), and it is echoed in the result.
	// At most MaxAgentLen bytes, no control characters; empty counts
	// as the anonymous agent "".
	Agent string `json:"agent,omitempty"`
	// WaitMS is how long the agent will wait in line; absent means the
	// governor's MaxWait, 0 means "grant now or refuse".
	WaitMS *int64 `json:"wait_ms,omitempty"`
}

// AcquireResult is governor.acquire's result.
type AcquireResult struct {
	Quota    string `json:"quota"`
	Cost     int64  `json:"cost"`
	Priority string `json:"priority"`
	Agent    string `json:"agent,omitempty"`
	WaitedMS int64  `json:"waited_ms"`
	State    State  `json:"state"`
}

// ReportParams are governor.report's params.
type ReportParams struct {
	Quota        string `json:"quota"`
	Status       int    `json:"status"`
	RetryAfterMS int64  `json:"retry_after_ms,omitempty"`
}

// StatusResult is governor.status's result.
type StatusResult struct {
	Quotas []State `json:"quotas"`
}

// RPCError is a JSON-RPC error object. Data, for a refused or invalid
// draw, is the dispatch envelope {kind, message, retry_after_ms}: kind
// rate_limited with code -32603, or schema with -32602.
type RPCError struct {
	Code    int       `json:"code"`
	Message string    `json:"message"`
	Data    *Envelope `json:"data,omitempty"`
}

func (e *RPCError) Error() string { return fmt.Sprintf("json-rpc %d: %s", e.Code, e.Message) }

// Envelope is the error data of a governor method.
type Envelope struct {
	Kind         string `json:"kind"`
	Message      string `json:"message"`
	Quota        string `json:"quota,omitempty"`
	RetryAfterMS int64  `json:"retry_after_ms,omitempty"`
}

type rpcRequest struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method"`
	Params  json.RawMessage `json:"params,omitempty"`
}

type rpcResponse struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  any             `json:"result,omitempty"`
	Error   *RPCError       `json:"error,omitempty"`
}

// maxRPCBody bounds a request body.
const maxRPCBody = 1 << 20

// RPCHandler serves the governor as JSON-RPC 2.0 over HTTP POST (mount it
// at /rpc): governor.acquire, governor.report and governor.status, single
// requests or batches; notifications get no response. Requests must be
// application/json; cross-origin browser requests, and requests to a
// loopback listener with a Host that is not loopback (DNS rebinding), are
// refused. It is safe for concurrent use.
func (g *Governor) RPCHandler() http.Handler {
	cop := http.NewCrossOriginProtection()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			w.Header().Set("Allow", http.MethodPost)
			http.Error(w, "JSON-RPC 2.0: POST a request", http.StatusMethodNotAllowed)
			return
		}
		if mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); mt != "application/json" {
			http.Error(w, "Content-Type must be application/json", http.StatusUnsupportedMediaType)
			return
		}
		if err := cop.Check(r); err != nil {
			http.Error(w, err.Error(), http.StatusForbidden)
			return
		}
		if local, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr); ok && isLoopback(local.String()) && !isLoopback(r.Host) {
			http.Error(w, fmt.Sprintf("invalid Host header %q for a loopback server", r.Host), http.StatusForbidden)
			return
		}
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxRPCBody))
		if err != nil {
			writeJSON(w, rpcResponse{JSONRPC: "2.0", ID: json.RawMessage("null"), Error: &RPCError{Code: -32700, Message: "reading the request: " + err.Error()}})
			return
		}
		body = bytes.TrimSpace(body)
		if len(body) > 0 && body[0] == '[' {
			var batch []json.RawMessage
			if err := json.Unmarshal(body, &batch); err != nil || len(batch) == 0 {
				writeJSON(w, parseError(err))
				return
			}
			var out []rpcResponse
			for _, raw := range batch {
				if resp, ok := g.serve(r.Context(), raw); ok {
					out = append(out, resp)
				}
			}
			if len(out) == 0 {
				w.WriteHeader(http.StatusNoContent)
				return
			}
			writeJSON(w, out)
			return
		}
		resp, ok := g.serve(r.Context(), body)
		if !ok {
			w.WriteHeader(http.StatusNoContent)
			return
		}
		writeJSON(w, resp)
	})
}

func parseError(err error) rpcResponse {
	msg := "not a JSON-RPC request"
	if err != nil {
		msg = "parse error: " + err.Error()
	}
	return rpcResponse{JSONRPC: "2.0", ID: json.RawMessage("null"), Error: &RPCError{Code: -32700, Message: msg}}
}

// serve answers one request; ok is false for a notification.
func (g *Governor) serve(ctx context.Context, raw json.RawMessage) (rpcResponse, bool) {
	var req rpcRequest
	if err := json.Unmarshal(raw, &req); err != nil {
		return parseError(err), true
	}
	id := req.ID
	notification := len(id) == 0
	if notification {
		id = json.RawMessage("null")
	}
	if req.JSONRPC != "2.0" || req.Method == "" {
		return rpcResponse{JSONRPC: "2.0", ID: id, Error: &RPCError{Code: -32600, Message: `invalid request: want "jsonrpc": "2.0" and a method`}}, true
	}
	result, rerr := g.call(ctx, req.Method, req.Params)
	if notification {
		return rpcResponse{}, false
	}
	if rerr != nil {
		return rpcResponse{JSONRPC: "2.0", ID: id, Error: rerr}, true
	}
	return rpcResponse{JSONRPC: "2.0", ID: id, Result: result}, true
}

func (g *Governor) call(ctx context.Context, method string, params json.RawMessage) (any, *RPCError) {
	decode := func(into any) *RPCError {
		if len(params) == 0 || string(params) == "null" {
			return nil
		}
		dec := json.NewDecoder(bytes.NewReader(params))
		dec.DisallowUnknownFields()
		if err := dec.Decode(into); err != nil {
			return invalidParams(fmt.Sprintf("%s params: %v", method, err))
		}
		return nil
	}
	switch method {
	case MethodAcquire:
		var p AcquireParams
		if err := decode(&p); err != nil {
			return nil, err
		}
		return g.rpcAcquire(ctx, p)
	case MethodReport:
		var p ReportParams
		if err := decode(&p); err != nil {
			return nil, err
		}
		if p.Status < 100 || p.Status > 599 || p.RetryAfterMS < 0 {
			return nil, invalidParams("governor.report needs an HTTP status (100-599) and a retry_after_ms >= 0")
		}
		// A caller's word, not the host's own observation: bounded.
		ra := min(time.Duration(min(p.RetryAfterMS, math.MaxInt64/int64(time.Millisecond)))*time.Millisecond, g.cfg.MaxReportBlock)
		s, err := g.Report(ctx, Feedback{Quota: p.Quota, Status: p.Status, RetryAfter: ra})
		if err != nil {
			return nil, toRPCError(err)
		}
		return s, nil
	case MethodStatus:
		var p struct{}
		if err := decode(&p); err != nil {
			return nil, err
		}
		return StatusResult{Quotas: g.Status(ctx)}, nil
	}
	return nil, &RPCError{Code: -32601, Message: fmt.Sprintf("no method %q (methods: %s, %s, %s)", method, MethodAcquire, MethodReport, MethodStatus)}
}

func (g *Governor) rpcAcquire(ctx context.Context, p AcquireParams) (any, *RPCError) {
	prio := Normal
	if p.Priority != "" {
		var err error
		if prio, err = ParsePriority(p.Priority); err != nil {
			return nil, toRPCError(err)
		}
	}
	if problem := agentProblem(p.Agent); problem != "" {
		return nil, invalidParams("governor.acquire: " + problem)
	}
	if p.WaitMS != nil {
		if *p.WaitMS < 0 {
			return nil, invalidParams("wait_ms must be >= 0")
		}
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, time.Duration(*p.WaitMS)*time.Millisecond)
		defer cancel()
	}
	gr, err := g.Acquire(ctx, Request{Quota: p.Quota, Cost: p.Cost, Priority: prio, Agent: p.Agent})
	if err != nil {
		return nil, toRPCError(err)
	}
	res := AcquireResult{Quota: gr.Quota, Cost: gr.Cost, Priority: gr.Priority.String(), Agent: p.Agent, WaitedMS: gr.Waited.Milliseconds()}
	if q := g.quotas[gr.Quota]; q != nil {
		q.mu.Lock()
		res.State = q.stateLocked()
		q.mu.Unlock()
		// Agents are read at Peek, not at a draw: the ones here would be
		// stale, so they are left to governor.status.
		res.State.Agents = nil
	}
	return res, nil
}

func invalidParams(msg string) *RPCError {
	return &RPCError{Code: -32602, Message: msg, Data: &Envelope{Kind: "schema", Message: msg}}
}

func toRPCError(err error) *RPCError {
	var le *LimitError
	switch {
	case errors.As(err, &le):
		return &RPCError{Code: -32603, Message: err.Error(), Data: &Envelope{Kind: "rate_limited", Message: err.Error(),
			Quota: le.Quota, RetryAfterMS: le.RetryAfter.Milliseconds()}}
	case errors.Is(err, ErrInvalid):
		return invalidParams(err.Error())
	}
	return &RPCError{Code: -32603, Message: err.Error(), Data: &Envelope{Kind: "internal", Message: err.Error()}}
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

// isLoopback reports whether a host or host:port names the loopback
// interface.
func isLoopback(hostport string) bool {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
