package transport

import (
	"context"
	"log/slog"
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
	tracenoop "go.opentelemetry.io/otel/trace/noop"

	"github.com/toolhost/toolhost/dispatcher"
	"github.com/toolhost/toolhost/plan"
)

// TracerName is the instrumentation scope of the transport's spans.
const TracerName = "github.com/toolhost/toolhost/transport"

// MetaTracestate is the W3C tracestate that goes with MetaTraceparent.
// MCP 2026-07-28 reserves both _meta keys (unprefixed) for W3C Trace
// Context.
const MetaTracestate = "tracestate"

// The transport's spans (docs/TRACING.md): one server span per tools/call,
// named as the OpenTelemetry conventions for MCP name it, "tools/call"
// and the tool's manifest name; and under a toolhost.plan call, one span
// per step. The dispatcher's spans nest under each.
const (
	SpanCall     = "tools/call"
	SpanPlanStep = "plan.step"
)

// Attribute keys of the transport's spans; mcp.*, gen_ai.* and error.type
// follow the OpenTelemetry semantic conventions.
const (
	attrMethod    = attribute.Key("mcp.method.name")
	attrProtocol  = attribute.Key("mcp.protocol.version")
	attrSession   = attribute.Key("mcp.session.id")
	attrOperation = attribute.Key("gen_ai.operation.name")
	attrRequestID = attribute.Key("toolhost.request_id")
	attrStepID    = attribute.Key("toolhost.plan.step_id")
)

var (
	w3c               = propagation.TraceContext{}
	noSpan trace.Span = tracenoop.Span{}
)

// newTracer is the transport's tracer, or nil (tracing off) for a nil
// provider.
func newTracer(p trace.TracerProvider) trace.Tracer {
	if p == nil {
		return nil
	}
	return p.Tracer(TracerName)
}

// metaCarrier reads W3C trace context from a request's _meta.
type metaCarrier map[string]any

func (m metaCarrier) Get(key string) string { s, _ := m[key].(string); return s }
func (m metaCarrier) Set(key, value string) { m[key] = value }
func (m metaCarrier) Keys() []string        { return []string{MetaTraceparent, MetaTracestate} }

// remoteParent joins a call to its caller's trace: _meta's traceparent and
// tracestate, else the HTTP request's traceparent and tracestate headers.
// A missing or malformed traceparent joins nothing (the call starts a
// trace of its own); it never fails the call. With tracing off this still
// runs, so the trace id reaches the audit record and egress requests
// carry the caller's context on.
func remoteParent(ctx context.Context, meta map[string]any, header http.Header) context.Context {
	if _, ok := meta[MetaTraceparent]; ok {
		if c := w3c.Extract(ctx, metaCarrier(meta)); trace.SpanContextFromContext(c).IsValid() {
			return c
		}
	}
	if header.Get(MetaTraceparent) != "" {
		return w3c.Extract(ctx, propagation.HeaderCarrier(header))
	}
	return ctx
}

// startCall starts the server span of one tools/call (toolhost.plan's
// included) in its caller's trace.
func (s *Server) startCall(ctx context.Context, req *mcp.CallToolRequest) (context.Context, trace.Span) {
	var header http.Header
	if req.Extra != nil {
		header = req.Extra.Header
	}
	ctx = remoteParent(ctx, req.Params.Meta, header)
	if s.tracer == nil {
		return ctx, noSpan
	}
	name := SpanCall
	if isPlanTool(req.Params.Name) {
		name += " " + PlanToolName
	} else if t, ok := s.lookup(req.Params.Name); ok {
		name += " " + t.Name // the manifest name: bounded, unlike what clients send
	}
	attrs := []attribute.KeyValue{attrMethod.String("tools/call"), attrOperation.String("execute_tool"),
		dispatcher.AttrTool.String(req.Params.Name)}
	if v := sessionVersion(req); v != "" {
		attrs = append(attrs, attrProtocol.String(v))
	}
	if req.Session != nil && req.Session.ID() != "" {
		attrs = append(attrs, attrSession.String(req.Session.ID()))
	}
	return s.tracer.Start(ctx, name, trace.WithSpanKind(trace.SpanKindServer), trace.WithAttributes(attrs...))
}

// endCall ends a call's span with its result: the request id, and for an
// isError result the envelope's kind (a failed plan session: "plan").
func endCall(span trace.Span, res *mcp.CallToolResult) {
	if span.IsRecording() && res != nil {
		if id, ok := res.Meta[MetaRequestID].(string); ok {
			span.SetAttributes(attrRequestID.String(id))
		}
		if res.IsError {
			kind, msg := "plan", "the plan session did not complete"
			if de, ok := res.Meta[MetaError].(*dispatcher.DispatchError); ok {
				kind, msg = string(de.Kind), de.Message
			}
			span.SetAttributes(dispatcher.AttrErrorType.String(kind))
			span.SetStatus(codes.Error, msg)
		}
	}
	span.End()
}

// stepSpan starts the span of one toolhost.plan step.
func (s *Server) stepSpan(ctx context.Context, c dispatcher.Call) (context.Context, trace.Span) {
	if s.tracer == nil {
		return ctx, noSpan
	}
	attrs := []attribute.KeyValue{dispatcher.AttrTool.String(c.Tool)}
	if id, ok := plan.StepOf(ctx); ok {
		attrs = append(attrs, attrStepID.Int(id))
	}
	return s.tracer.Start(ctx, SpanPlanStep, trace.WithAttributes(attrs...))
}

// endStep ends a step's span with its outcome.
func endStep(span trace.Span, o dispatcher.Outcome) {
	if o.Err != nil && span.IsRecording() {
		span.SetAttributes(dispatcher.AttrErrorType.String(string(o.Err.Kind)))
		span.SetStatus(codes.Error, o.Err.Message)
	}
	span.End()
}

// traceIDs are the audit record's trace_id and span_id: the call's trace
// (its caller's, or its own when tracing is on) and its span; "" for none.
func traceIDs(ctx context.Context) (traceID, spanID string) {
	sc := trace.SpanContextFromContext(ctx)
	if sc.HasTraceID() {
		traceID = sc.TraceID().String()
	}
	if sc.HasSpanID() && !sc.IsRemote() {
		spanID = sc.SpanID().String()
	}
	return traceID, spanID
}

// traceAttrs adds the call's trace_id and span_id to its audit record.
func traceAttrs(c *callInfo, attrs []slog.Attr) []slog.Attr {
	if c.traceID != "" {
		attrs = append(attrs, slog.String("trace_id", c.traceID))
	}
	if c.spanID != "" {
		attrs = append(attrs, slog.String("span_id", c.spanID))
	}
	return attrs
}
