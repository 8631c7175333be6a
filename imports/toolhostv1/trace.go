package toolhostv1

import (
	"context"
	"net/http"
	"net/url"
	"strconv"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/toolhost/toolhost/abi"
)

// TracerName is the instrumentation scope of the egress spans.
const TracerName = "github.com/toolhost/toolhost/imports/toolhostv1"

// Attribute keys of an egress span: the OpenTelemetry HTTP client
// conventions, and the module that made the request.
const (
	attrMethod = attribute.Key("http.request.method")
	attrURL    = attribute.Key("url.full")
	attrServer = attribute.Key("server.address")
	attrPort   = attribute.Key("server.port")
	attrStatus = attribute.Key("http.response.status_code")
	attrError  = attribute.Key("error.type")
	attrModule = attribute.Key("toolhost.module")
)

// traced is do inside a client span, a child of the span in ctx (the
// dispatcher's attempt). Its tracer comes from that span, so this package
// is handed no provider: with tracing off the span is the no-op one, which
// still carries the caller's trace context for injection.
func (c *Call) traced(ctx context.Context, raw []byte) (*abi.HTTPResponse, *abi.EgressError) {
	ctx, span := trace.SpanFromContext(ctx).TracerProvider().Tracer(TracerName).Start(ctx, "HTTP",
		trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(attrModule.String(c.module)))
	resp, eerr := c.do(ctx, raw)
	if span.IsRecording() {
		switch {
		case eerr != nil:
			span.SetAttributes(attrError.String(string(eerr.Kind)))
			span.SetStatus(codes.Error, eerr.Message)
		case resp != nil:
			span.SetAttributes(attrStatus.Int(resp.Status))
			if resp.Status >= 400 {
				span.SetAttributes(attrError.String(strconv.Itoa(resp.Status)))
				span.SetStatus(codes.Error, http.StatusText(resp.Status))
			}
		}
	}
	span.End()
	return resp, eerr
}

// describe names the egress span after the request, once do has checked
// it. url.full leaves out the query, which may carry a key.
func describe(ctx context.Context, method string, u *url.URL) {
	span := trace.SpanFromContext(ctx)
	if !span.IsRecording() {
		return
	}
	span.SetName(method)
	full := url.URL{Scheme: u.Scheme, Host: u.Host, Path: u.Path}
	span.SetAttributes(attrMethod.String(method), attrURL.String(full.String()), attrServer.String(u.Hostname()))
	if p, err := strconv.Atoi(portOf(u)); err == nil {
		span.SetAttributes(attrPort.Int(p))
	}
}

// inject sets the request's traceparent and tracestate to the egress
// span's context (replacing any the tool set: the host speaks for the
// call's trace), so the upstream's own spans join the trace. Nothing is
// set when the call belongs to no trace.
func inject(ctx context.Context, h http.Header) {
	propagation.TraceContext{}.Inject(ctx, propagation.HeaderCarrier(h))
}
