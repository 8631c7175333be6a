package main

import (
	"encoding/json"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"

	"github.com/toolhost/toolhost/internal/testkit/otlptest"
)

// traceUpstream is a local TLS upstream (see start) that records the
// traceparent header of every request.
type traceUpstream struct {
	mu     sync.Mutex
	parent []string
	hits   atomic.Int32
}

func (u *traceUpstream) seen() []string {
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([]string(nil), u.parent...)
}

// TestE2ETrace: serve with OTEL_EXPORTER_OTLP_ENDPOINT pointing at an
// OTLP/HTTP receiver in the test. One web.fetch call, governed by a
// quota, whose upstream (a real local TLS server) answers 503 and then
// 200, so it is retried, sent with a traceparent in _meta: the receiver
// gets, after SIGTERM flushes, exactly one trace, the caller's, in which
// the call's span is the caller's child, each attempt the call's, and each
// attempt's governor draw and egress request the attempt's. Every egress
// request carried a traceparent naming its egress span; the audit record
// names the trace.
func TestE2ETrace(t *testing.T) {
	rcv, endpoint := otlptest.NewHTTP(t)
	var ups traceUpstream
	up, pemFile := ups.start(t)
	conf := webConfig(t, true)
	f, err := os.OpenFile(conf, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = f.WriteString("\n[quotas.web]\ncapacity = 100\ninterval = \"1m\"\nburst = 10\ntools = { \"web.fetch\" = 1 }\n")
	f.Close()
	srv := startServerEnv(t, []string{"SSL_CERT_FILE=" + pemFile, "OTEL_EXPORTER_OTLP_ENDPOINT=" + endpoint,
		"OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf", "OTEL_SERVICE_NAME=", "OTEL_TRACES_EXPORTER=", "OTEL_SDK_DISABLED="},
		webPlugins(t), "--config", conf)

	const caller, callerSpan = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
	res := callTool(t, srv.client(t), "web_fetch", map[string]any{"url": up.URL + "/flaky"},
		mcp.Meta{"traceparent": "00-" + caller + "-" + callerSpan + "-01", "tracestate": "congo=t61rcWkgMzE"})
	if res.IsError {
		t.Fatalf("call failed: %+v", res.Content[0])
	}
	srv.stop(t) // flushes the spans

	spans := rcv.Spans()
	byName := map[string][]otlptest.Span{}
	for _, s := range spans {
		if s.TraceID != caller {
			t.Fatalf("span %s is in trace %s, not the caller's %s", s.Name, s.TraceID, caller)
		}
		if s.Service != "toolhost" {
			t.Fatalf("span %s of service %q", s.Name, s.Service)
		}
		byName[s.Name] = append(byName[s.Name], s)
	}
	call := only(t, byName, "tools/call web.fetch")
	if call.ParentID != callerSpan || call.Kind != tracepb.Span_SPAN_KIND_SERVER || call.Attrs["gen_ai.tool.name"] != "web_fetch" {
		t.Fatalf("call span %+v, want a server span under the caller's %s", call, callerSpan)
	}
	attempts, govs, egress := byName["dispatch.attempt"], byName["governor.wait"], byName["GET"]
	if len(attempts) != 2 || len(govs) != 2 || len(egress) != 2 || len(spans) != 7 {
		t.Fatalf("spans %v, want the call, 2 attempts, 2 governor draws, 2 egress requests", names(spans))
	}
	for _, a := range attempts {
		if a.ParentID != call.SpanID {
			t.Fatalf("attempt %s's parent %s, want the call %s", a.Attrs["toolhost.attempt"], a.ParentID, call.SpanID)
		}
		under := func(kids []otlptest.Span) otlptest.Span {
			var found []otlptest.Span
			for _, k := range kids {
				if k.ParentID == a.SpanID {
					found = append(found, k)
				}
			}
			if len(found) != 1 {
				t.Fatalf("attempt %s has %d of %v under it", a.Attrs["toolhost.attempt"], len(found), names(kids))
			}
			return found[0]
		}
		under(govs)
		e := under(egress)
		if e.Kind != tracepb.Span_SPAN_KIND_CLIENT || e.Attrs["url.full"] != up.URL+"/flaky" {
			t.Fatalf("egress span %+v", e)
		}
		switch a.Attrs["toolhost.attempt"] {
		case "1":
			if !a.Error || a.Attrs["error.type"] != "transient" || e.Attrs["http.response.status_code"] != "503" {
				t.Fatalf("attempt 1 %+v, its egress %+v: want transient after a 503", a, e)
			}
		case "2":
			if a.Error || e.Attrs["http.response.status_code"] != "200" {
				t.Fatalf("attempt 2 %+v, its egress %+v: want success", a, e)
			}
		default:
			t.Fatalf("attempt span %+v", a)
		}
	}
	// Each upstream request named its own egress span as its parent.
	seen := ups.seen()
	if len(seen) != 2 {
		t.Fatalf("upstream saw %d requests: %v", len(seen), seen)
	}
	for _, e := range egress {
		want := "00-" + caller + "-" + e.SpanID + "-01"
		if seen[0] != want && seen[1] != want {
			t.Fatalf("upstream traceparents %v; none is %s (egress span)", seen, want)
		}
	}
	var audit map[string]any
	for _, l := range strings.Split(srv.stderr.String(), "\n") {
		if strings.Contains(l, `"msg":"call"`) {
			_ = json.Unmarshal([]byte(l), &audit)
		}
	}
	if audit["trace_id"] != caller || audit["span_id"] != call.SpanID || audit["attempts"] != 2.0 {
		t.Fatalf("audit record %v, want trace_id %s span_id %s after 2 attempts", audit, caller, call.SpanID)
	}
}

// Without OTEL_EXPORTER_OTLP_ENDPOINT, tracing is off: nothing is
// exported, and the egress request still carries the caller's trace
// context on (the audit record names it).
func TestE2ETraceOff(t *testing.T) {
	rcv, _ := otlptest.NewHTTP(t)
	var ups traceUpstream
	ups.hits.Store(1) // no 503
	up, pemFile := ups.start(t)
	srv := startServerEnv(t, []string{"SSL_CERT_FILE=" + pemFile, "OTEL_EXPORTER_OTLP_ENDPOINT=", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT="},
		webPlugins(t), "--config", webConfig(t, true))
	const parent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	res := callTool(t, srv.client(t), "web_fetch", map[string]any{"url": up.URL + "/flaky"}, mcp.Meta{"traceparent": parent})
	if res.IsError {
		t.Fatalf("call failed: %+v", res.Content[0])
	}
	srv.stop(t)
	if seen := ups.seen(); len(seen) != 1 || seen[0] != parent {
		t.Fatalf("upstream saw traceparents %v, want the caller's %s", seen, parent)
	}
	if rcv.Requests() != 0 || !strings.Contains(srv.stderr.String(), `"trace_id":"4bf92f3577b34da6a3ce929d0e0e4736"`) {
		t.Fatalf("%d exports; log:\n%s", rcv.Requests(), srv.stderr.String())
	}
}

// start serves /flaky on a local TLS server (503 on the first request,
// a small page after), recording every request's traceparent, and returns
// it with its certificate's file for SSL_CERT_FILE.
func (u *traceUpstream) start(t *testing.T) (*httptest.Server, string) {
	t.Helper()
	up := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u.mu.Lock()
		u.parent = append(u.parent, r.Header.Get("traceparent"))
		u.mu.Unlock()
		if r.URL.Path != "/flaky" {
			http.NotFound(w, r)
			return
		}
		if u.hits.Add(1) == 1 {
			http.Error(w, "warming up", http.StatusServiceUnavailable)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write([]byte("<html><head><title>Traced</title></head><body><p>one trace per call</p></body></html>"))
	}))
	t.Cleanup(up.Close)
	pemFile := filepath.Join(t.TempDir(), "upstream.pem")
	block := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: up.Certificate().Raw})
	if err := os.WriteFile(pemFile, block, 0o644); err != nil {
		t.Fatal(err)
	}
	return up, pemFile
}

func only(t *testing.T, byName map[string][]otlptest.Span, name string) otlptest.Span {
	t.Helper()
	if len(byName[name]) != 1 {
		t.Fatalf("%d spans named %q", len(byName[name]), name)
	}
	return byName[name][0]
}

func names(spans []otlptest.Span) []string {
	var out []string
	for _, s := range spans {
		out = append(out, s.Name+"("+s.SpanID+"<-"+s.ParentID+")")
	}
	return out
}
