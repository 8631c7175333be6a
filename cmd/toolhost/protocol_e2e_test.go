package main

import (
	"context"
	"encoding/json"
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
		t.Fatalf("negotiated %s, want %s", got, version)
	}
	return cs
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
