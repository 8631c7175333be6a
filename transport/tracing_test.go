package transport_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/toolhost/toolhost/dispatcher"
	"github.com/toolhost/toolhost/internal/testkit/otlptest"
	"github.com/toolhost/toolhost/registry"
	"github.com/toolhost/toolhost/transport"
)

const (
	callerTrace  = "4bf92f3577b34da6a3ce929d0e0e4736"
	callerSpan   = "00f067aa0ba902b7"
	callerParent = "00-" + callerTrace + "-" + callerSpan + "-01"
	headerTrace  = "0af7651916cd43dd8448eb211c80319c"
	headerParent = "00-" + headerTrace + "-b7ad6b7169203331-01"
)

// traced is a server over one tool (echo) and toolhost.plan whose spans
// go to an in-memory exporter (nil: tracing off) and whose audit log goes
// to a buffer.
type traced struct {
	srv   *transport.Server
	exp   *tracetest.InMemoryExporter
	audit *bytes.Buffer
}

func newTraced(t *testing.T, on bool) *traced {
	t.Helper()
	reg, err := registry.New([]*registry.Tool{{Name: "echo.say", InputSchema: json.RawMessage(`{"type":"object"}`), Timeout: time.Second,
		ReadOnly: true, Handler: registry.HandlerFunc(func(_ context.Context, args json.RawMessage) (json.RawMessage, error) {
			return args, nil
		})}})
	if err != nil {
		t.Fatal(err)
	}
	tr := &traced{audit: &bytes.Buffer{}}
	var tp *sdktrace.TracerProvider
	dcfg := dispatcher.Config{}
	opts := transport.Options{Logger: slog.New(slog.NewJSONHandler(tr.audit, nil)), Plans: &transport.PlanOptions{}}
	if on {
		tr.exp = tracetest.NewInMemoryExporter()
		tp = sdktrace.NewTracerProvider(sdktrace.WithSyncer(tr.exp))
		dcfg.TracerProvider, opts.TracerProvider = tp, tp
	}
	tr.srv = transport.New(dispatcher.New(reg, dcfg), reg, opts)
	return tr
}

// auditLines are the audit log's "call" records.
func (tr *traced) auditLines(t *testing.T) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(tr.audit.String()), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("audit line %q: %v", l, err)
		}
		if m["msg"] == "call" {
			out = append(out, m)
		}
	}
	return out
}

// headerClient connects over real HTTP, every request carrying the W3C
// traceparent header.
func headerClient(t *testing.T, srv *transport.Server, traceparent string) *mcp.ClientSession {
	t.Helper()
	hs := httptest.NewServer(srv.HTTPHandler())
	t.Cleanup(hs.Close)
	hc := &http.Client{Transport: roundTrip(func(r *http.Request) (*http.Response, error) {
		r = r.Clone(r.Context())
		r.Header.Set("traceparent", traceparent)
		return http.DefaultTransport.RoundTrip(r)
	})}
	c := mcp.NewClient(&mcp.Implementation{Name: "trace-test", Version: "v0"}, nil)
	cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: hs.URL, HTTPClient: hc, MaxRetries: -1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

type roundTrip func(*http.Request) (*http.Response, error)

func (f roundTrip) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func callEcho(t *testing.T, cs *mcp.ClientSession, meta mcp.Meta) {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "echo_say", Arguments: map[string]any{"x": 1}, Meta: meta})
	if err != nil || res.IsError {
		t.Fatalf("call: %v %+v", err, res)
	}
}

// The call's span continues the caller's trace: _meta's traceparent and
// tracestate (MCP 2026-07-28) first, the HTTP headers when _meta has none,
// a new trace when _meta's is malformed and there is no header. The
// dispatcher's span is its child, and the audit record names the trace
// and the call's span.
func TestTraceparent(t *testing.T) {
	for _, tc := range []struct {
		name        string
		meta        mcp.Meta
		header      string
		trace, span string // the parent wanted; "" trace: a new root
		state       string
	}{
		{"meta", mcp.Meta{"traceparent": callerParent, "tracestate": "congo=t61rcWkgMzE"}, "", callerTrace, callerSpan, "congo=t61rcWkgMzE"},
		{"meta wins over header", mcp.Meta{"traceparent": callerParent}, headerParent, callerTrace, callerSpan, ""},
		{"header", nil, headerParent, headerTrace, "b7ad6b7169203331", ""},
		{"malformed meta, header", mcp.Meta{"traceparent": "00-xyz"}, headerParent, headerTrace, "b7ad6b7169203331", ""},
		{"malformed meta alone", mcp.Meta{"traceparent": "00-" + callerTrace + "-0000000000000000-01"}, "", "", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr := newTraced(t, true)
			var cs *mcp.ClientSession
			if tc.header != "" {
				cs = headerClient(t, tr.srv, tc.header)
			} else {
				cs = httpClient(t, tr.srv)
			}
			callEcho(t, cs, tc.meta)
			st := otlptest.Stubs(tr.exp.GetSpans())
			call := st.One(t, "tools/call echo.say")
			attempt := st.One(t, dispatcher.SpanAttempt)
			otlptest.ChildOf(t, attempt, call)
			if tc.trace == "" {
				if call.Parent.IsValid() {
					t.Fatalf("call span has parent %v, want a new trace", call.Parent)
				}
			} else if call.SpanContext.TraceID().String() != tc.trace || call.Parent.SpanID().String() != tc.span || !call.Parent.IsRemote() {
				t.Fatalf("call span in trace %s under %s, want %s under %s", call.SpanContext.TraceID(), call.Parent.SpanID(), tc.trace, tc.span)
			}
			if got := call.SpanContext.TraceState().String(); got != tc.state {
				t.Fatalf("tracestate %q, want %q", got, tc.state)
			}
			if a, _ := otlptest.Attr(call, "mcp.method.name"); a != "tools/call" {
				t.Fatalf("mcp.method.name %v", a)
			}
			lines := tr.auditLines(t)
			if len(lines) != 1 || lines[0]["trace_id"] != call.SpanContext.TraceID().String() || lines[0]["span_id"] != call.SpanContext.SpanID().String() {
				t.Fatalf("audit %v, want trace_id %s span_id %s", lines, call.SpanContext.TraceID(), call.SpanContext.SpanID())
			}
		})
	}
}

// With tracing off there are no spans, but the audit record still names
// the caller's trace.
func TestTraceIDWhenTracingOff(t *testing.T) {
	tr := newTraced(t, false)
	callEcho(t, httpClient(t, tr.srv), mcp.Meta{"traceparent": callerParent})
	lines := tr.auditLines(t)
	if len(lines) != 1 || lines[0]["trace_id"] != callerTrace || lines[0]["span_id"] != nil {
		t.Fatalf("audit %v, want trace_id %s and no span_id", lines, callerTrace)
	}
}

// A toolhost.plan session is one trace: the plan call's span, a plan.step
// span per executed step under it (with its step id), and each step's
// dispatch under its step; every step's audit record names the trace.
func TestTracePlanSession(t *testing.T) {
	tr := newTraced(t, true)
	cs := httpClient(t, tr.srv)
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: transport.PlanToolName, Meta: mcp.Meta{"traceparent": callerParent},
		Arguments: json.RawMessage(`{"goal":"g","steps":[{"id":1,"tool_name":"echo.say","args":{"a":1}},
			{"id":2,"tool_name":"echo_say","args":{"b":{"$ref":"/steps/1/result/a"}}}]}`)})
	if err != nil || res.IsError {
		t.Fatalf("plan: %v %+v", err, res)
	}
	st := otlptest.Stubs(tr.exp.GetSpans())
	call := st.One(t, "tools/call toolhost.plan")
	if call.SpanContext.TraceID().String() != callerTrace {
		t.Fatalf("plan call in trace %s, want the caller's", call.SpanContext.TraceID())
	}
	steps := st.Named(transport.SpanPlanStep)
	if len(steps) != 2 {
		t.Fatalf("spans %v, want 2 steps", st.Names())
	}
	for i, s := range steps {
		otlptest.ChildOf(t, s, call)
		if id, _ := otlptest.Attr(s, "toolhost.plan.step_id"); id != int64(i+1) {
			t.Fatalf("step span %d has step_id %v", i, id)
		}
		// Plan steps are keyed by the executor: step → idempotency.wait → attempt.
		var wait, attempt bool
		for _, w := range st.Named(dispatcher.SpanIdempotency) {
			if w.Parent.SpanID() == s.SpanContext.SpanID() {
				wait = true
				for _, a := range st.Named(dispatcher.SpanAttempt) {
					attempt = attempt || a.Parent.SpanID() == w.SpanContext.SpanID()
				}
			}
		}
		if !wait || !attempt {
			t.Fatalf("step %d: idempotency.wait under it %v, an attempt under that %v", i+1, wait, attempt)
		}
	}
	for _, l := range tr.auditLines(t) {
		if l["trace_id"] != callerTrace {
			t.Fatalf("step audit %v, want trace_id %s", l, callerTrace)
		}
	}
}
