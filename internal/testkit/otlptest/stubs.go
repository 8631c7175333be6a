package otlptest

import (
	"testing"

	"go.opentelemetry.io/otel/sdk/trace/tracetest"
)

// Stubs are the spans an in-memory exporter recorded, for tests that
// check a span tree within one process (Receiver checks what an exporter
// sent over the wire).
type Stubs []tracetest.SpanStub

// Named returns the spans called name.
func (st Stubs) Named(name string) []tracetest.SpanStub {
	var out []tracetest.SpanStub
	for _, s := range st {
		if s.Name == name {
			out = append(out, s)
		}
	}
	return out
}

// One returns the one span called name, failing t unless there is exactly
// one.
func (st Stubs) One(t testing.TB, name string) tracetest.SpanStub {
	t.Helper()
	s := st.Named(name)
	if len(s) != 1 {
		t.Fatalf("%d spans named %q, want 1 (spans: %v)", len(s), name, st.Names())
	}
	return s[0]
}

// Names lists the spans' names in the order they ended.
func (st Stubs) Names() []string {
	var n []string
	for _, s := range st {
		n = append(n, s.Name)
	}
	return n
}

// ChildOf fails t unless child is in parent's trace with parent as its
// parent span.
func ChildOf(t testing.TB, child, parent tracetest.SpanStub) {
	t.Helper()
	if child.SpanContext.TraceID() != parent.SpanContext.TraceID() || child.Parent.SpanID() != parent.SpanContext.SpanID() {
		t.Fatalf("%s (trace %s, parent %s) is not a child of %s (trace %s, span %s)", child.Name, child.SpanContext.TraceID(),
			child.Parent.SpanID(), parent.Name, parent.SpanContext.TraceID(), parent.SpanContext.SpanID())
	}
}

// Attr returns the value of the span's attribute key.
func Attr(s tracetest.SpanStub, key string) (any, bool) {
	for _, a := range s.Attributes {
		if string(a.Key) == key {
			return a.Value.AsInterface(), true
		}
	}
	return nil, false
}
