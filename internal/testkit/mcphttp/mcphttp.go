// Package mcphttp drives an MCP Streamable HTTP handler in process, for
// benchmarks: a 2025-11-25 session and the POSTs in it, with no network
// between the client and the handler.
package mcphttp

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/toolhost/toolhost/transport"
)

// Session opens a 2025-11-25 session on h (initialize, then initialized)
// and returns its id.
func Session(tb testing.TB, h http.Handler) string {
	tb.Helper()
	w := Post(h, "", []byte(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}`))
	sid := w.Header().Get("Mcp-Session-Id")
	if w.Code != http.StatusOK || sid == "" {
		tb.Fatalf("initialize: %d %s", w.Code, w.Body)
	}
	if w := Post(h, sid, []byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)); w.Code/100 != 2 {
		tb.Fatalf("initialized: %d %s", w.Code, w.Body)
	}
	return sid
}

// Post sends body to h's /mcp in session sid ("" for none) and returns the
// recorded answer.
func Post(h http.Handler, sid string, body []byte) *httptest.ResponseRecorder {
	req := httptest.NewRequest(http.MethodPost, "/mcp", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", transport.Revision20251125)
	if sid != "" {
		req.Header.Set("Mcp-Session-Id", sid)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req)
	return w
}
