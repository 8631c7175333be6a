package main

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolhost/toolhost/transport"
)

// TestE2EHostileClient: what a client can send a server that is not a
// well-formed, well-behaved MCP request, and that each is refused with a
// clear error while the server goes on serving its other clients: a body
// over --max-body, a session over --max-sessions, a DNS-rebinding Host
// header, headers over net/http's limit, a body that is not JSON, and
// tool names and _meta values no tool expects. (Arguments over --max-args,
// a bad token and the per-caller cap are in TestE2EAuth.)
func TestE2EHostileClient(t *testing.T) {
	srv := startServer(t, pluginsDir(t), "--max-body", "4096", "--max-sessions", "2")
	good := srv.clientAt(t, transport.Revision20251125) // one of the two sessions allowed
	initialize := func(name string) string {
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":%q,"version":"1"}}}`, name)
	}
	stillServes := func(t *testing.T) {
		t.Helper()
		if res := callTool(t, good, "wat.echo", map[string]any{"ok": true}, nil); res.IsError || textOf(res) != `{"ok":true}` {
			t.Fatalf("the good client's call after a hostile request: %+v", res.Content)
		}
	}
	cases := []struct {
		name       string
		body       string
		header     map[string]string
		wantStatus int
		wantBody   string
	}{
		{"body over --max-body", initialize(strings.Repeat("x", 8192)), nil, http.StatusRequestEntityTooLarge, "request body exceeds 4096 bytes"},
		{"DNS rebinding Host header", initialize("rebind"), map[string]string{"Host": "evil.example"}, http.StatusForbidden, "invalid Host header"},
		{"headers over 1 MB", initialize("big-header"), map[string]string{"X-Junk": strings.Repeat("j", 2<<20)}, http.StatusRequestHeaderFieldsTooLarge, ""},
		{"not JSON", `{"jsonrpc":`, nil, http.StatusBadRequest, ""},
		// Last: a second session reaches the limit, and a third is refused
		// (the limit is checked before the request is read).
		{"a session over --max-sessions", initialize("third"), nil, http.StatusServiceUnavailable, "its limit"},
	}
	for _, tc := range cases {
		if tc.wantStatus == http.StatusServiceUnavailable {
			srv.clientAt(t, transport.Revision20251125)
		}
		t.Run(tc.name, func(t *testing.T) {
			status, _, body := edgeRequest(t, http.MethodPost, srv.url, tc.body, tc.header)
			t.Logf("HTTP %d: %.200s", status, body)
			if status != tc.wantStatus || !strings.Contains(body, tc.wantBody) {
				t.Fatalf("HTTP %d %q; want %d containing %q", status, body, tc.wantStatus, tc.wantBody)
			}
			stillServes(t)
		})
	}
	t.Run("odd tool names and _meta", func(t *testing.T) {
		for _, name := range []string{"", "../../etc/passwd", strings.Repeat("n", 3000), "wat.echo\x00", "名前"} {
			if de := envelope(t, callTool(t, good, name, map[string]any{}, nil)); de.Kind != "not_found" {
				t.Errorf("tool %q: %+v; want not_found", name, de)
			}
		}
		for _, meta := range []mcp.Meta{
			{"toolhost/timeout_ms": -1}, {"toolhost/timeout_ms": "soon"}, {"toolhost/budget": 1.5},
			{"toolhost/idempotency_key": strings.Repeat("k", 256)}, {"toolhost/idempotency_key": map[string]any{}},
		} {
			if de := envelope(t, callTool(t, good, "wat.echo", map[string]any{}, meta)); de.Kind != "schema" {
				t.Errorf("_meta %v: %+v; want schema", meta, de)
			}
		}
		stillServes(t)
	})
	resp, err := http.Get(strings.TrimSuffix(srv.url, "/mcp") + "/healthz")
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("/healthz after the hostile requests: %v %v", resp, err)
	}
	resp.Body.Close()
}
