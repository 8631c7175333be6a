package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolhost/toolhost/transport"
)

// clientAt connects the official SDK client at one protocol revision
// (client, without it, asks for the SDK's latest, 2026-07-28).
func (s *server) clientAt(t *testing.T, version string) *mcp.ClientSession {
	t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "e2e", Version: "test"}, nil)
	cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: s.url}, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	if got := cs.InitializeResult().ProtocolVersion; got != version {
		// The SDK falls back to initialize on any error from
		// server/discover and keeps the error to itself: ask again.
		t.Fatalf("negotiated %s, want %s (a server/discover now: %s)", got, version, probeDiscover(s.url))
	}
	return cs
}

// probeDiscover is what a server/discover at 2026-07-28 gets from url now:
// the status and the start of the body, or the transport's error.
func probeDiscover(url string) string {
	body := `{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", transport.Revision20260728)
	req.Header.Set("Mcp-Method", "server/discover")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return err.Error()
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(res.Body, 512))
	return fmt.Sprintf("%d %s", res.StatusCode, b)
}

// TestE2EProtocolRevisions: one `toolhost serve`, both revisions on /mcp.
// A 2026-07-28 client works without a session, a 2025-11-25 client gets
// one; both call the same modules and see tool failures as isError results
// with the envelope. (Non-object structuredContent at 2026-07-28 is in
// transport's TestWire and TestHTTPBothRevisions.)
func TestE2EProtocolRevisions(t *testing.T) {
	srv := startServer(t, pluginsDir(t))
	for _, tc := range []struct {
		version string
		session bool
	}{
		{transport.Revision20260728, false},
		{transport.Revision20251125, true},
	} {
		cs := srv.clientAt(t, tc.version)
		if (cs.ID() != "") != tc.session {
			t.Errorf("%s: session id %q", tc.version, cs.ID())
		}
		list, err := cs.ListTools(context.Background(), nil)
		if err != nil || len(list.Tools) == 0 {
			t.Fatalf("%s: tools/list: %v", tc.version, err)
		}
		res := callTool(t, cs, "wat.echo", map[string]any{"list": []any{1, "two"}}, nil)
		got, _ := json.Marshal(res.StructuredContent)
		if res.IsError || string(got) != `{"list":[1,"two"]}` {
			t.Fatalf("%s: wat.echo: structuredContent %s, %+v", tc.version, got, res)
		}
		if de := envelope(t, callTool(t, cs, "no.such.tool", map[string]any{}, nil)); de.Kind != "not_found" {
			t.Errorf("%s: envelope %+v", tc.version, de)
		}
	}
}
