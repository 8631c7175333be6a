package transport

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolhost/toolhost/dispatcher"
)

// Protocol revisions toolhost serves differently (see docs/PROTOCOL.md).
const (
	// Revision20251125 and earlier: initialize, then Mcp-Session-Id.
	Revision20251125 = "2025-11-25"
	// Revision20260728 is the stateless core: server/discover, a per-request
	// _meta protocol version, subscriptions/listen.
	Revision20260728 = "2026-07-28"
)

// served lists the request methods toolhost answers, for each revision
// family. Everything else — an unknown method, or one of a capability this
// server does not advertise (resources, prompts, completions, tasks) — is
// answered -32601, so that a client never takes an empty answer for an
// empty feature.
var served = map[string]struct{ legacy, stateless bool }{
	"initialize":           {legacy: true},
	"ping":                 {legacy: true},
	"logging/setLevel":     {legacy: true},
	"tools/list":           {legacy: true, stateless: true},
	"tools/call":           {legacy: true, stateless: true},
	"server/discover":      {stateless: true},
	"subscriptions/listen": {stateless: true},
	// MCP Tasks (tasks.go): 2025-11-25's experimental Tasks and the
	// 2026-07-28 extension.
	"tasks/get":    {legacy: true, stateless: true},
	"tasks/cancel": {legacy: true, stateless: true},
	"tasks/result": {legacy: true},
	"tasks/update": {stateless: true},
	// Resources and prompts from modules (resources.go), served while some
	// module offers them (see offering).
	"resources/list":           {legacy: true, stateless: true},
	"resources/templates/list": {legacy: true, stateless: true},
	"resources/read":           {legacy: true, stateless: true},
	"prompts/list":             {legacy: true, stateless: true},
	"prompts/get":              {legacy: true, stateless: true},
}

// serves reports whether a request method is answered at a revision.
func serves(method string, stateless bool) bool {
	m, ok := served[method]
	if stateless {
		return ok && m.stateless
	}
	return ok && m.legacy
}

// isStateless reports whether a protocol version is one of the stateless
// core (2026-07-28 and later); dates in this form order as strings.
func isStateless(version string) bool { return version >= Revision20260728 }

// sessionVersion is the protocol version a request was made at: the one
// its session negotiated, or for a stateless request the one in its _meta.
func sessionVersion(req mcp.Request) string {
	ss, ok := req.GetSession().(*mcp.ServerSession)
	if !ok || ss == nil {
		return ""
	}
	if p := ss.InitializeParams(); p != nil {
		return p.ProtocolVersion
	}
	return ""
}

// logLevels are the levels of logging/setLevel (RFC 5424 severities).
var logLevels = []mcp.LoggingLevel{"debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"}

// protocolMiddleware answers what the SDK would answer loosely:
// unserved methods get -32601, a bad log level -32602, and each
// tools/call's outcome goes to clients that asked for log messages (and
// carries resultType at 2026-07-28). revisionShape does the rest.
func (s *Server) protocolMiddleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if isRequestMethod(method) {
			if _, ok := served[method]; !ok {
				return nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound,
					Message: unservedMethod(method)}
			}
			if what, ok := s.offering(method); !ok && !s.wasTold(serverSession(req), what) {
				return nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: noOffers(method, what)}
			}
		}
		// At 2026-07-28 the level travels in each request's _meta.
		if p := req.GetParams(); p != nil && isStateless(sessionVersion(req)) {
			if v, ok := p.GetMeta()[mcp.MetaKeyLogLevel]; ok {
				if l, _ := v.(string); !slices.Contains(logLevels, mcp.LoggingLevel(l)) {
					return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams,
						Message: fmt.Sprintf("invalid _meta %q %v: want one of %v", mcp.MetaKeyLogLevel, v, logLevels)}
				}
			}
		}
		if p, ok := req.GetParams().(*mcp.SetLoggingLevelParams); ok && method == "logging/setLevel" {
			if p == nil || !slices.Contains(logLevels, p.Level) {
				return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams,
					Message: fmt.Sprintf("invalid log level %q: want one of %v", levelOf(p), logLevels)}
			}
		}
		if call, ok := req.(*mcp.CallToolRequest); ok && method == "tools/call" {
			ctx, done := s.endedInputs.track(ctx, call.Session)
			defer done()
			res, err := s.callTool(ctx, call)
			s.logCall(ctx, call, res)
			if res != nil && res.InputRequests == nil && isStateless(sessionVersion(req)) {
				markComplete(res)
			}
			return res, err
		}
		res, err := next(ctx, method, req)
		if ir, ok := res.(*mcp.InitializeResult); ok && err == nil {
			s.tell(serverSession(req), ir)
		}
		return res, err
	}
}

// serverSession is the session a request came on, nil when none.
func serverSession(req mcp.Request) *mcp.ServerSession {
	ss, _ := req.GetSession().(*mcp.ServerSession)
	return ss
}

// revisionShape gives a result the fields of the client's revision only:
// a tools/list answer before 2026-07-28 goes without ttlMs and cacheScope.
// It must be the outermost middleware: the others expect the SDK's result
// types.
func revisionShape(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		if lt, ok := res.(*mcp.ListToolsResult); ok && err == nil && !isStateless(sessionVersion(req)) {
			return legacyToolList{lt}, nil
		}
		return res, err
	}
}

func levelOf(p *mcp.SetLoggingLevelParams) mcp.LoggingLevel {
	if p == nil {
		return ""
	}
	return p.Level
}

// isRequestMethod tells requests from notifications, which never get an
// answer.
func isRequestMethod(method string) bool {
	return len(method) < len("notifications/") || method[:len("notifications/")] != "notifications/"
}

// legacyToolList is a tools/list result for a client of a revision before
// 2026-07-28: ttlMs and cacheScope (and resultType) belong to 2026-07-28
// and are left out.
type legacyToolList struct{ *mcp.ListToolsResult }

// MarshalJSON writes the 2025-11-25 shape of the result.
func (l legacyToolList) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		Meta       mcp.Meta    `json:"_meta,omitempty"`
		NextCursor string      `json:"nextCursor,omitempty"`
		Tools      []*mcp.Tool `json:"tools"`
	}{l.Meta, l.NextCursor, l.Tools})
}

// logCall sends the call's outcome as a log message to a client that set
// a log level (logging/setLevel before 2026-07-28, the per-request _meta
// level at 2026-07-28); the SDK drops it for everyone else. Failures are
// warnings, so a client at "warning" hears only of those.
func (s *Server) logCall(ctx context.Context, req *mcp.CallToolRequest, res *mcp.CallToolResult) {
	// A cancelled call gets no answer, and no word of its outcome either.
	if res == nil || req.Session == nil || ctx.Err() != nil {
		return
	}
	data := map[string]any{"tool": req.Params.Name, "outcome": "ok", "request_id": res.Meta[MetaRequestID]}
	level := mcp.LoggingLevel("info")
	if res.IsError {
		level = "warning"
		if de, ok := res.Meta[MetaError].(*dispatcher.DispatchError); ok {
			data["outcome"] = de.Kind
			data["message"] = de.Message
			data["attempts"] = de.Attempts
		}
	}
	// Best effort: a client gone away must not fail the call it made.
	_ = req.Session.Log(ctx, &mcp.LoggingMessageParams{Level: level, Logger: name, Data: data})
}

// markComplete gives a tools/call result the resultType "complete" that
// 2026-07-28 puts on every result. The SDK sets it only on the results of
// its own tool handlers, which toolhost's tools/call goes around, and the
// field is unexported: decoding is the one public way to set it.
func markComplete(res *mcp.CallToolResult) {
	saved := *res
	if err := json.Unmarshal([]byte(`{"content":[],"resultType":"complete"}`), res); err != nil {
		*res = saved
		return
	}
	res.Meta, res.Content, res.StructuredContent, res.IsError = saved.Meta, saved.Content, saved.StructuredContent, saved.IsError
	res.InputRequests, res.RequestState = saved.InputRequests, saved.RequestState
}
