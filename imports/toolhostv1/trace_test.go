package toolhostv1

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/toolhost/toolhost/abi"
)

// tracedUpstream is a local TLS server that records the traceparent and
// tracestate of each request, and a Call whose grant reaches it and trusts
// its certificate.
func tracedUpstream(t *testing.T, status int) (*httptest.Server, *Call, chan [2]string) {
	t.Helper()
	seen := make(chan [2]string, 4)
	up := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen <- [2]string{r.Header.Get("traceparent"), r.Header.Get("tracestate")}
		w.WriteHeader(status)
	}))
	t.Cleanup(up.Close)
	grants, err := NewGrants(Egress{Grants: map[string]Grant{"m.wasm": {Hosts: []string{"127.0.0.1"},
		AllowNetworks: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}}}})
	if err != nil {
		t.Fatal(err)
	}
	g := grants.grants["m.wasm"]
	g.tr.TLSClientConfig = &tls.Config{RootCAs: up.Client().Transport.(*http.Transport).TLSClientConfig.RootCAs}
	return up, grants.Call("m.wasm"), seen
}

func request(t *testing.T, url string, headers map[string][]string) []byte {
	b, err := json.Marshal(abi.HTTPRequest{Method: "GET", URL: url + "/v1/items?key=secret", Headers: headers})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// An egress request is a client span under the span in its context, and
// carries that span's context to the upstream (replacing a traceparent the
// tool set itself), with the caller's tracestate.
func TestEgressSpanAndTraceparent(t *testing.T) {
	for _, status := range []int{200, 503} {
		up, call, seen := tracedUpstream(t, status)
		exp := tracetest.NewInMemoryExporter()
		tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
		ts, _ := trace.ParseTraceState("congo=t61rcWkgMzE")
		parent := trace.NewSpanContext(trace.SpanContextConfig{TraceID: trace.TraceID{1, 2, 3}, SpanID: trace.SpanID{4, 5, 6},
			TraceFlags: trace.FlagsSampled, TraceState: ts, Remote: true})
		ctx, attempt := tp.Tracer("t").Start(trace.ContextWithRemoteSpanContext(context.Background(), parent), "dispatch.attempt")
		resp, eerr := call.traced(ctx, request(t, up.URL, map[string][]string{"traceparent": {"00-" + trace.TraceID{9}.String() + "-0909090909090909-01"}}))
		attempt.End()
		if eerr != nil || resp.Status != status {
			t.Fatalf("status %d: %+v %+v", status, resp, eerr)
		}
		var egress tracetest.SpanStub
		for _, s := range exp.GetSpans() {
			if s.Name == "GET" {
				egress = s
			}
		}
		if egress.Parent.SpanID() != attempt.SpanContext().SpanID() || egress.SpanKind != trace.SpanKindClient {
			t.Fatalf("egress span %+v, want a client span under the attempt", egress)
		}
		attrs := map[string]string{}
		for _, a := range egress.Attributes {
			attrs[string(a.Key)] = a.Value.Emit()
		}
		if attrs["url.full"] != up.URL+"/v1/items" || attrs["http.response.status_code"] != itoa(status) ||
			attrs["toolhost.module"] != "m.wasm" || (status >= 400) != (attrs["error.type"] == itoa(status)) {
			t.Fatalf("egress span attributes %v", attrs)
		}
		got := <-seen
		want := "00-" + parent.TraceID().String() + "-" + egress.SpanContext.SpanID().String() + "-01"
		if got != [2]string{want, "congo=t61rcWkgMzE"} {
			t.Fatalf("upstream saw %q, want traceparent %s and the caller's tracestate", got, want)
		}
	}
}

// A call that belongs to no trace sends no traceparent of the host's; with
// tracing off (no span, only the caller's remote context) the caller's is
// passed on.
func TestEgressTraceparentWithoutTracing(t *testing.T) {
	up, call, seen := tracedUpstream(t, 200)
	if _, eerr := call.traced(context.Background(), request(t, up.URL, nil)); eerr != nil {
		t.Fatal(eerr)
	}
	if got := <-seen; got[0] != "" {
		t.Fatalf("no trace, yet upstream saw traceparent %q", got[0])
	}
	parent := trace.NewSpanContext(trace.SpanContextConfig{TraceID: trace.TraceID{1}, SpanID: trace.SpanID{2}, TraceFlags: trace.FlagsSampled, Remote: true})
	if _, eerr := call.traced(trace.ContextWithRemoteSpanContext(context.Background(), parent), request(t, up.URL, nil)); eerr != nil {
		t.Fatal(eerr)
	}
	if got, want := (<-seen)[0], "00-"+parent.TraceID().String()+"-"+parent.SpanID().String()+"-01"; got != want {
		t.Fatalf("upstream saw traceparent %q, want the caller's %s", got, want)
	}
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }
