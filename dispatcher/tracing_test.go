package dispatcher

import (
	"context"
	"encoding/json"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/toolhost/toolhost/events"
	"github.com/toolhost/toolhost/governor"
	"github.com/toolhost/toolhost/internal/testkit/otlptest"
	"github.com/toolhost/toolhost/registry"
)

// egressLike stands for the host's egress: it makes its span from the
// tracer of the span in its context, as the host does, without being
// handed a provider. It fails transiently once, then succeeds.
func egressLike(calls *atomic.Int32) registry.Handler {
	return registry.HandlerFunc(func(ctx context.Context, _ json.RawMessage) (json.RawMessage, error) {
		_, span := trace.SpanFromContext(ctx).TracerProvider().Tracer("egress").Start(ctx, "egress GET")
		span.End()
		if calls.Add(1) == 1 {
			return nil, transient(0)
		}
		return json.RawMessage(`{"ok":true}`), nil
	})
}

// A retried, governed call is one trace: call → attempt 1 and 2, each with
// its governor draw and its handler's span beneath it; the events carry
// the trace id.
func TestTraceRetriedGovernedCall(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		exp := tracetest.NewInMemoryExporter()
		tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
		g, err := governor.New(governor.Config{Broadcast: -1, Quotas: []governor.Quota{
			{Name: "gh", Capacity: 10, Interval: time.Second, Burst: 10, Tools: map[string]int64{"gh.search": 1}}}})
		if err != nil {
			t.Fatal(err)
		}
		defer g.Close()
		bus := events.NewBus(nil)
		sub := bus.Subscribe(16, "dispatch.")
		defer sub.Close()
		var calls atomic.Int32
		d := New(newRegistry(t, toolSpec{name: "gh.search", handler: egressLike(&calls)}),
			Config{Governor: g, TracerProvider: tp, Events: bus})

		ctx, root := tp.Tracer("test").Start(context.Background(), "tools/call")
		if _, err := d.Call(ctx, Call{Tool: "gh.search", Args: json.RawMessage(`{}`)}); err != nil {
			t.Fatal(err)
		}
		root.End()

		st := otlptest.Stubs(exp.GetSpans())
		call := st.One(t, "tools/call")
		attempts := st.Named(SpanAttempt)
		govs := st.Named(SpanGovernor)
		egress := st.Named("egress GET")
		if len(attempts) != 2 || len(govs) != 2 || len(egress) != 2 || len(st) != 7 {
			t.Fatalf("spans %v, want the call, 2 attempts, 2 governor draws, 2 egress", st.Names())
		}
		for i, a := range attempts {
			otlptest.ChildOf(t, a, call)
			otlptest.ChildOf(t, govs[i], a)
			otlptest.ChildOf(t, egress[i], a)
			if n, _ := otlptest.Attr(a, string(AttrAttempt)); n != int64(i+1) {
				t.Fatalf("attempt span %d says attempt %v", i, n)
			}
		}
		if k, _ := otlptest.Attr(attempts[0], string(AttrErrorType)); k != string(KindTransient) {
			t.Fatalf("attempt 1 error.type %v", k)
		}
		if _, ok := otlptest.Attr(attempts[0], string(AttrRetryDelayMS)); !ok {
			t.Fatal("attempt 1 does not say when it was retried")
		}
		if _, failed := otlptest.Attr(attempts[1], string(AttrErrorType)); failed {
			t.Fatal("attempt 2 succeeded but has an error.type")
		}
		want := call.SpanContext.TraceID().String()
		for range 4 { // attempt, retry, attempt, result
			e := <-sub.C
			var v struct {
				TraceID string `json:"trace_id"`
			}
			b, _ := json.Marshal(e.Data)
			_ = json.Unmarshal(b, &v)
			if e.Type != EventRetry && v.TraceID != want {
				t.Fatalf("%s event trace_id %q, want %q", e.Type, v.TraceID, want)
			}
		}
	})
}

// A keyed call's attempts nest under its idempotency.wait span, which says
// the caller leads; a second caller with the key replays and says it
// waited.
func TestTraceKeyedCall(t *testing.T) {
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	d := New(newRegistry(t, toolSpec{name: "echo", handler: noop}), Config{TracerProvider: tp})
	c := Call{Tool: "echo", Args: json.RawMessage(`{}`), Options: Options{IdempotencyKey: "k"}}
	for range 2 {
		if _, err := d.Call(context.Background(), c); err != nil {
			t.Fatal(err)
		}
	}
	st := otlptest.Stubs(exp.GetSpans())
	waits := st.Named(SpanIdempotency)
	attempt := st.One(t, SpanAttempt)
	if len(waits) != 2 {
		t.Fatalf("spans %v", st.Names())
	}
	otlptest.ChildOf(t, attempt, waits[0])
	for i, role := range []string{"leader", "waiter"} {
		if r, _ := otlptest.Attr(waits[i], string(AttrIdempotencyRole)); r != role {
			t.Fatalf("call %d's role %v, want %s", i+1, r, role)
		}
	}
}

// With no provider the dispatcher makes no spans and leaves the caller's
// context alone: the handler sees the span it was called under.
func TestTracingOff(t *testing.T) {
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	var seen trace.SpanContext
	h := registry.HandlerFunc(func(ctx context.Context, _ json.RawMessage) (json.RawMessage, error) {
		seen = trace.SpanContextFromContext(ctx)
		return json.RawMessage(`1`), nil
	})
	d := New(newRegistry(t, toolSpec{name: "t", handler: h}), Config{})
	ctx, root := tp.Tracer("test").Start(context.Background(), "caller")
	if _, err := d.Call(ctx, Call{Tool: "t", Args: json.RawMessage(`{}`)}); err != nil {
		t.Fatal(err)
	}
	root.End()
	if !seen.Equal(root.SpanContext()) {
		t.Fatalf("handler saw %v, want the caller's span %v", seen, root.SpanContext())
	}
	if n := len(exp.GetSpans()); n != 1 {
		t.Fatalf("%d spans, want only the caller's", n)
	}
}

// BenchmarkDispatchTraced is BenchmarkDispatch with tracing on: every
// span sampled and handed to an exporter that drops it, so what is
// measured is making the spans. (Tracing off is BenchmarkDispatch itself:
// no provider.)
func BenchmarkDispatchTraced(b *testing.B) {
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(tracetest.NewNoopExporter()))
	d := New(newRegistry(b, toolSpec{name: "noop", handler: noop}), Config{TracerProvider: tp, IdempotencyLimits: roomy})
	ctx, root := tp.Tracer("bench").Start(context.Background(), "tools/call")
	defer root.End()
	benchCalls(b, d, ctx)
}
