package dispatcher

import (
	"context"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
	tracenoop "go.opentelemetry.io/otel/trace/noop"

	"github.com/toolhost/toolhost/registry"
)

// The spans a dispatch makes (docs/TRACING.md), children of the span in
// the context Do is given (transport's tools/call span):
//
//	idempotency.wait            a keyed call: claim, then wait for the outcome
//	  dispatch.attempt          the leader's attempts nest here
//	dispatch.attempt            each attempt of an unkeyed call
//	  governor.wait             the attempt's draw from its quotas
//	  (the handler's spans)     egress requests, from the attempt's context
const (
	SpanAttempt     = "dispatch.attempt"
	SpanGovernor    = "governor.wait"
	SpanIdempotency = "idempotency.wait"
)

// TracerName is the instrumentation scope of the dispatcher's spans.
const TracerName = "github.com/toolhost/toolhost/dispatcher"

// Attribute keys of the dispatcher's spans. error.type and gen_ai.tool.name
// follow the OpenTelemetry semantic conventions; the rest are toolhost's.
const (
	AttrTool            = attribute.Key("gen_ai.tool.name")
	AttrErrorType       = attribute.Key("error.type")
	AttrAttempt         = attribute.Key("toolhost.attempt")
	AttrRetryDelayMS    = attribute.Key("toolhost.retry.delay_ms")
	AttrPriority        = attribute.Key("toolhost.priority")
	AttrIdempotencyRole = attribute.Key("toolhost.idempotency.role")
	AttrAttempts        = attribute.Key("toolhost.attempts")
)

// noSpan is what the span helpers return when tracing is off: ending it,
// or anything else, does nothing, and it costs no allocation.
var noSpan trace.Span = tracenoop.Span{}

// newTracer is the dispatcher's tracer, or nil (tracing off) for a nil
// provider.
func newTracer(p trace.TracerProvider) trace.Tracer {
	if p == nil {
		return nil
	}
	return p.Tracer(TracerName)
}

// attemptSpan starts attempt n's span; the attempt's governor draw and its
// handler run in the returned context, so their spans are its children.
func (d *Dispatcher) attemptSpan(ctx context.Context, tool *registry.Tool, n int) (context.Context, trace.Span) {
	if d.tracer == nil {
		return ctx, noSpan
	}
	return d.tracer.Start(ctx, SpanAttempt, trace.WithAttributes(AttrTool.String(tool.Name), AttrAttempt.Int(n)))
}

// endAttempt records how the attempt ended: its error kind, and the delay
// before the next attempt when it is retried.
func endAttempt(span trace.Span, derr *DispatchError, retryIn time.Duration) {
	if derr != nil && span.IsRecording() && retryIn > 0 {
		span.SetAttributes(AttrRetryDelayMS.Float64(ms(retryIn)))
	}
	endSpan(span, derr)
}

// governorSpan starts the span of one governor draw. Admit is called with
// the attempt's context, not this span's: the context it returns is the
// handler's, whose spans belong under the attempt.
func (d *Dispatcher) governorSpan(ctx context.Context, tool *registry.Tool, c Call) trace.Span {
	if d.tracer == nil {
		return noSpan
	}
	_, span := d.tracer.Start(ctx, SpanGovernor, trace.WithAttributes(AttrTool.String(tool.Name)))
	if c.Priority != "" {
		// Without one, the governor uses the tool's class: its business.
		span.SetAttributes(AttrPriority.String(c.Priority))
	}
	return span
}

// idempotencySpan starts the span of a keyed call, from its claim to its
// outcome. The leader's execution runs in the returned context, so its
// attempts nest under it.
func (d *Dispatcher) idempotencySpan(ctx context.Context, tool *registry.Tool) (context.Context, trace.Span) {
	if d.tracer == nil {
		return ctx, noSpan
	}
	return d.tracer.Start(ctx, SpanIdempotency, trace.WithAttributes(AttrTool.String(tool.Name)))
}

// markRole says on the keyed call's span whether this caller leads the
// execution or waits for (or replays) another's.
func (d *Dispatcher) markRole(ctx context.Context, leader bool) {
	if d.tracer == nil {
		return
	}
	role := "waiter"
	if leader {
		role = "leader"
	}
	trace.SpanFromContext(ctx).SetAttributes(AttrIdempotencyRole.String(role))
}

// keyedTraced is keyed inside its idempotency.wait span.
func (x *dispatch) keyedTraced(ctx context.Context) Outcome {
	ctx, span := x.d.idempotencySpan(ctx, x.tool)
	o := x.keyed(ctx)
	if span.IsRecording() {
		span.SetAttributes(AttrAttempts.Int(o.Attempts))
	}
	endSpan(span, o.Err)
	return o
}

// endSpan ends a span with the envelope's kind as its error, if any.
func endSpan(span trace.Span, derr *DispatchError) {
	if derr != nil && span.IsRecording() {
		span.SetAttributes(AttrErrorType.String(string(derr.Kind)))
		span.SetStatus(codes.Error, derr.Message)
	}
	span.End()
}

// traceID is the id of the trace ctx belongs to, for events; "" when it
// belongs to none.
func traceID(ctx context.Context) string {
	sc := trace.SpanContextFromContext(ctx)
	if !sc.HasTraceID() {
		return ""
	}
	return sc.TraceID().String()
}
