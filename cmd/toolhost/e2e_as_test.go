package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolhost/toolhost/internal/testkit/testwasm"
	"github.com/toolhost/toolhost/transport"
)

// TestASGuest: the AssemblyScript example tool, built from source with
// abi/assemblyscript's pinned compiler (which sets --exportStart
// _initialize), served and called end to end: a result through the SDK's
// JSON reader and writer (escapes, non-ASCII, a surrogate pair), a schema
// error result, and a log note reaching an MCP client.
func TestASGuest(t *testing.T) {
	wasm := testwasm.AS(t, "tools-src-as/textkit")
	srv := startServer(t, testwasm.Dir(t, wasm))

	out, errOut, code := srv.cli(t, "call", "textkit.uniq",
		`{"items":["b","a","say \"hi\"","b","caf\u00e9","\ud83d\ude00","B"],"order":"count","ignore_case":true}`)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var got struct {
		Total    int
		Distinct []struct {
			Value string
			Count int
		}
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("%s: %v", out, err)
	}
	want := []string{"b", "a", "café", `say "hi"`, "😀"}
	if got.Total != 7 || len(got.Distinct) != len(want) || got.Distinct[0].Count != 3 {
		t.Fatalf("textkit.uniq = %s", out)
	}
	for i, w := range want {
		if got.Distinct[i].Value != w {
			t.Fatalf("distinct[%d] = %q, want %q (%s)", i, got.Distinct[i].Value, w, out)
		}
	}

	// An error result of kind schema, from the handler's own check.
	_, errOut, code = srv.cli(t, "call", "textkit.slug", `{"text":"!!! ???"}`)
	if code == 0 || !strings.Contains(errOut, `"schema"`) || !strings.Contains(errOut, "no letters or digits") {
		t.Fatalf("slug of punctuation: exit %d, %s", code, errOut)
	}

	logs := make(chan string, 4)
	c := mcp.NewClient(&mcp.Implementation{Name: "as-test", Version: "0"}, &mcp.ClientOptions{
		LoggingMessageHandler: func(_ context.Context, r *mcp.LoggingMessageRequest) {
			if s, ok := r.Params.Data.(string); ok && strings.Contains(r.Params.Logger, "slug") {
				logs <- s
			}
		},
	})
	cs, err := c.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: srv.url}, &mcp.ClientSessionOptions{ProtocolVersion: transport.Revision20251125})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if err := cs.SetLoggingLevel(t.Context(), &mcp.SetLoggingLevelParams{Level: "debug"}); err != nil {
		t.Fatal(err)
	}
	r, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "textkit_slug",
		Arguments: map[string]any{"text": "Hello, Wörld! AssemblyScript tools on toolhost", "max_len": 20}})
	if err != nil || r.IsError {
		t.Fatalf("slug: %v %+v", err, r)
	}
	if b, _ := json.Marshal(r.StructuredContent); string(b) != `{"cut":true,"slug":"hello-w-rld-assembly"}` {
		t.Fatalf("slug = %s", b)
	}
	// The note went out on the call's stream before its result; the
	// client hands it to the handler on a goroutine of its own.
	select {
	case msg := <-logs:
		if msg != "slug cut at 20 characters" {
			t.Fatalf("log note %q", msg)
		}
	case <-time.After(time.Minute):
		t.Fatal("no log note from textkit.slug a minute after its result")
	}
}
