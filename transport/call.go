package transport

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"log/slog"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolhost/toolhost/access"
	"github.com/toolhost/toolhost/dispatcher"
)

// callTool is the whole tools/call path: limits, options from _meta, one
// dispatch, the audit line, and the result or envelope as a
// CallToolResult. Tool failures never become JSON-RPC errors: a model must
// be able to read them.
func (s *Server) callTool(ctx context.Context, req *mcp.CallToolRequest) (res *mcp.CallToolResult, _ error) {
	ctx, span := s.startCall(ctx, req)
	defer func() { endCall(span, res) }()
	if s.opts.Plans != nil && isPlanTool(req.Params.Name) && s.mayCall(ctx, PlanToolName) {
		return s.callPlan(ctx, req), nil
	}
	s.inflight.enter()
	defer s.inflight.exit()
	start := time.Now()
	p := req.Params
	c := &callInfo{requestID: newRequestID(), tool: p.Name, caller: callerOf(req), trace: traceparent(p.Meta)}
	c.traceID, c.spanID = traceIDs(ctx)
	o := s.dispatch(withClientNotes(ctx, req, c.requestID, true), c, p)
	o = s.elicitRounds(ctx, req, c, o)
	s.audit(c, p, o, time.Since(start))
	if o.Err != nil {
		return errorResult(o.Err, c.requestID), nil
	}
	if o.Input != nil {
		return s.inputResult(ctx, req, c, o.Input), nil
	}
	out := &mcp.CallToolResult{
		Content: []mcp.Content{&mcp.TextContent{Text: string(o.Result)}},
		Meta:    mcp.Meta{MetaRequestID: c.requestID},
	}
	// Up to 2025-11-25, MCP defines structuredContent as a JSON object: a
	// tool that returns a number or a list is carried as text only there.
	// 2026-07-28 takes any JSON value.
	if isObject(o.Result) || isStateless(sessionVersion(req)) {
		out.StructuredContent = json.RawMessage(o.Result)
	}
	return out, nil
}

// callInfo is what the audit log and the envelope need to know of a call.
type callInfo struct {
	requestID string
	tool      string
	caller    string
	trace     string
	traceID   string // the call's trace, and its span when tracing is on
	spanID    string
	key       string
	denied    *access.Decision // the access rule that refused the call
}

func (s *Server) dispatch(ctx context.Context, c *callInfo, p *mcp.CallToolParamsRaw) dispatcher.Outcome {
	opts, release, derr := s.admit(p, c.caller)
	if derr != nil {
		return dispatcher.Outcome{Err: derr}
	}
	defer release()
	c.key = opts.IdempotencyKey
	call := dispatcher.Call{Tool: p.Name, Args: p.Arguments, Options: opts}
	tool, derr := s.permitted(ctx, c, p.Name, p.Meta)
	if tool != "" {
		c.tool = tool // the manifest name: audit, events and idempotency scopes use it
	}
	if derr != nil {
		return s.refused(call, derr)
	}
	call.Tool = tool
	if ctx, derr = s.resume(ctx, c, p); derr != nil {
		return s.refused(call, derr)
	}
	return s.d.Do(ctx, call)
}

// refused ends a call the transport turned away; a not_found goes through
// the dispatcher's books as its own do.
func (s *Server) refused(c dispatcher.Call, derr *dispatcher.DispatchError) dispatcher.Outcome {
	if derr.Kind == dispatcher.KindNotFound {
		return s.d.Refused(c, derr)
	}
	return dispatcher.Outcome{Err: derr}
}

// resolve turns the name a client called, wire or manifest form, into the
// manifest name of a tool it may call. A hidden tool is not_found, as an
// unknown one. _meta["toolhost/name"], when sent, must name the same tool;
// if not, the tool the call named is returned with the refusal.
func (s *Server) resolve(name string, meta map[string]any) (string, *dispatcher.DispatchError) {
	t, ok := s.lookup(name)
	if !ok {
		return "", notFound(name)
	}
	if v, sent := meta[MetaToolName]; sent {
		other, _ := v.(string)
		if o, ok := s.lookup(other); !ok || o != t {
			return t.Name, refusal(dispatcher.KindSchema, "_meta %q is %s but the call names tool %q (%s); send one tool's name in both, or leave _meta %q out",
				MetaToolName, jsonString(v), t.Name, t.WireName, MetaToolName)
		}
	}
	return t.Name, nil
}

// jsonString prints a _meta value as the client sent it.
func jsonString(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprintf("%v", v)
	}
	return string(b)
}

// admit applies what every tools/call (a tool's or toolhost.plan's) gets
// before any work: the arguments' size cap, the _meta options, and the
// caller's in-flight cap. On success the caller must call release when the
// call ends.
func (s *Server) admit(p *mcp.CallToolParamsRaw, caller string) (dispatcher.Options, func(), *dispatcher.DispatchError) {
	if n := len(p.Arguments); s.opts.MaxArgsBytes > 0 && n > s.opts.MaxArgsBytes {
		return dispatcher.Options{}, nil, refusal(dispatcher.KindSchema, "arguments are %d bytes, over this server's limit of %d", n, s.opts.MaxArgsBytes)
	}
	opts, err := parseOptions(p.Meta)
	if err != nil {
		return opts, nil, refusal(dispatcher.KindSchema, "%v", err)
	}
	opts.Caller = caller
	if !s.callers.enter(caller) {
		return opts, nil, refusal(dispatcher.KindRateLimited, "caller %q already has %d calls in flight, this server's limit per caller; wait for one to finish",
			caller, s.opts.MaxCallsPerCaller)
	}
	return opts, func() { s.callers.exit(caller) }, nil
}

// refusal is the envelope of a call refused before it reached the
// dispatcher.
func refusal(kind dispatcher.Kind, format string, args ...any) *dispatcher.DispatchError {
	return &dispatcher.DispatchError{Kind: kind, Message: fmt.Sprintf(format, args...), JSONRPCCode: kind.Code()}
}

// audit writes one line per call. Argument values appear only when the
// operator asked for them (Options.AuditArgs): they may hold secrets.
func (s *Server) audit(c *callInfo, p *mcp.CallToolParamsRaw, o dispatcher.Outcome, took time.Duration) {
	outcome := "ok"
	switch {
	case o.Cancelled:
		// Not a kind: nobody was sent an envelope (see countingConn).
		outcome = "cancelled"
	case o.Err != nil:
		outcome = string(o.Err.Kind)
	case o.Input != nil:
		outcome = "input_required"
	}
	attrs := []slog.Attr{
		slog.String("request_id", c.requestID),
		slog.String("tool", c.tool),
		slog.String("caller", c.caller),
		slog.String("outcome", outcome),
		slog.Int("attempts", o.Attempts),
		slog.Float64("duration_ms", float64(took)/float64(time.Millisecond)),
	}
	if c.key != "" {
		attrs = append(attrs, slog.String("idempotency_key", c.key))
	}
	if c.trace != "" {
		attrs = append(attrs, slog.String("traceparent", c.trace))
	}
	attrs = traceAttrs(c, attrs)
	if s.opts.AuditArgs {
		attrs = append(attrs, slog.String("args", string(p.Arguments)))
	}
	attrs = deniedAttrs(c, attrs)
	s.logger.LogAttrs(context.Background(), slog.LevelInfo, "call", attrs...)
}

func errorResult(de *dispatcher.DispatchError, requestID string) *mcp.CallToolResult {
	return &mcp.CallToolResult{
		IsError: true,
		Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf("toolhost error (%s): %s", de.Kind, de.Message)}},
		Meta:    mcp.Meta{MetaError: de, MetaRequestID: requestID},
	}
}

// callerOf is the authenticated identity of the request, or "" when the
// server runs without tokens (stdio, or loopback without --token-file).
func callerOf(req *mcp.CallToolRequest) string {
	if req.Extra != nil && req.Extra.TokenInfo != nil {
		return req.Extra.TokenInfo.UserID
	}
	return ""
}

// traceparent accepts a W3C trace context from _meta so that the call's log
// lines join the caller's trace.
func traceparent(meta map[string]any) string {
	if v, ok := meta[MetaTraceparent].(string); ok && len(v) <= 128 {
		return v
	}
	return ""
}

func newRequestID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

func isObject(b []byte) bool {
	for _, c := range b {
		switch c {
		case ' ', '\t', '\n', '\r':
			continue
		case '{':
			return true
		}
		return false
	}
	return false
}
