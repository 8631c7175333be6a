package main

import (
	"encoding/json"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolhost/toolhost/dispatcher"
	"github.com/toolhost/toolhost/internal/testkit/testwasm"
	"github.com/toolhost/toolhost/transport"
)

// TestE2ERecursionDeadline: over MCP, a tool whose work is recursion
// without a loop answers `timeout` when its deadline passes, never a late
// success, whether it is the C fixture (idempotent, so each of its attempts
// times out) or the WAT one. Before the termination check ran at function
// entries c.fib with fib(38) and a 300 ms timeout ran 5 s and succeeded.
func TestE2ERecursionDeadline(t *testing.T) {
	srv := startServer(t, testwasm.Dir(t,
		testwasm.C(t, "host/testdata/cfib"),
		testwasm.WAT(t, "host/testdata/wat/fib.wat"),
	))
	cs := srv.client(t)
	for _, tool := range []string{"c.fib", "wat.fib"} {
		t.Run(tool, func(t *testing.T) {
			res := callTool(t, cs, tool, map[string]any{"n": 20}, nil)
			if b, _ := json.Marshal(res.StructuredContent); res.IsError || string(b) != "6765" {
				t.Fatalf("%s fib(20) = %s (isError=%v); want 6765", tool, b, res.IsError)
			}
			// fib(60) takes hours: only the deadline ends it.
			for _, meta := range []mcp.Meta{nil, {transport.MetaTimeoutMS: 100}} {
				de := envelope(t, callTool(t, cs, tool, map[string]any{"n": 60}, meta))
				if de.Kind != dispatcher.KindTimeout || de.JSONRPCCode != -32603 {
					t.Fatalf("fib(60) with _meta %v: got %+v, want kind timeout", meta, de)
				}
			}
		})
	}
}
