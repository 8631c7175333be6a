package main

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolhost/toolhost/internal/printable"
	"github.com/toolhost/toolhost/internal/testkit/testwasm"
	"github.com/toolhost/toolhost/transport"
)

// unsafeIn returns the first character a terminal acts on in s, if any.
func unsafeIn(s string) (rune, bool) {
	r, _, ok := printable.First(s)
	return r, ok
}

// stringsIn collects every string in a decoded JSON value.
func stringsIn(v any, into *[]string) {
	switch v := v.(type) {
	case string:
		*into = append(*into, v)
	case map[string]any:
		for k, e := range v {
			*into = append(*into, k)
			stringsIn(e, into)
		}
	case []any:
		for _, e := range v {
			stringsIn(e, into)
		}
	}
}

// TestE2EGuestTextNeverReachesATerminalRaw holds issue 27 item 3: a
// guest's progress and log messages (OSC 52 clipboard writes, a window
// title, clear-screen, CR and LF forging "task task-1: completed",
// bidirectional overrides) reached `toolhost call --task`'s stderr and
// MCP clients' notifications verbatim, and the CLI printed a server's
// results as they came (C1 controls, overrides). Now the notes are one
// line of escaped text wherever they go, and everything the CLI prints
// from a server is escaped (JSON with \u escapes, the same value).
func TestE2EGuestTextNeverReachesATerminalRaw(t *testing.T) {
	srv := startServer(t, testwasm.Dir(t, testwasm.WAT(t, "host/testdata/wat/terminal.wat")))

	for _, args := range [][]string{{"call", "--task", "notes.terminal", "{}"}, {"call", "notes.terminal", "{}"}} {
		out, errOut, code := srv.cli(t, args...)
		if code != 0 {
			t.Fatalf("%v: exit %d, stderr %q", args, code, errOut)
		}
		// Lines are the CLI's own: what is between them must be safe.
		if r, bad := unsafeIn(strings.ReplaceAll(out+errOut, "\n", "")); bad {
			t.Fatalf("%v printed %U raw:\nstdout %q\nstderr %q", args, r, out, errOut)
		}
		var res map[string]string
		if err := json.Unmarshal([]byte(out), &res); err != nil || res["text"] != "\u009b2J \u202eexe \u200f" {
			t.Fatalf("%v: stdout %q decodes to %q (%v); want the tool's text, escaped only on the wire", args, out, res, err)
		}
		if args[1] == "--task" {
			for _, line := range strings.Split(strings.TrimSpace(errOut), "\n") {
				if strings.Contains(line, "completed") && !strings.HasPrefix(line, "task task-") {
					t.Errorf("a line a guest forged: %q", line)
				}
			}
			if !strings.Contains(errOut, `\x1b[2J\x1b[H\x1b]52;c;eA==\a`) {
				t.Errorf("stderr %q does not show the guest's sequences as escapes", errOut)
			}
		}
	}

	// An MCP client's notifications/progress and notifications/message.
	var mu sync.Mutex
	var got []string
	keep := func(v any) {
		b, _ := json.Marshal(v)
		var d any
		json.Unmarshal(b, &d)
		mu.Lock()
		defer mu.Unlock()
		stringsIn(d, &got)
	}
	notes := make(chan struct{}, 2)
	c := mcp.NewClient(&mcp.Implementation{Name: "terminal-test", Version: "0"}, &mcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, r *mcp.ProgressNotificationClientRequest) {
			keep(r.Params)
			notes <- struct{}{}
		},
		LoggingMessageHandler: func(_ context.Context, r *mcp.LoggingMessageRequest) {
			if r.Params.Logger == "notes.terminal" || r.Params.Logger == "notes_terminal" {
				keep(r.Params)
				notes <- struct{}{}
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
	p := &mcp.CallToolParams{Name: "notes_terminal", Arguments: map[string]any{}}
	p.SetProgressToken("t1")
	if _, err := cs.CallTool(t.Context(), p); err != nil {
		t.Fatal(err)
	}
	<-notes
	<-notes
	mu.Lock()
	defer mu.Unlock()
	joined := strings.Join(got, "|")
	if r, bad := unsafeIn(joined); bad {
		t.Fatalf("a notification carries %U raw: %q", r, joined)
	}
	if !strings.Contains(joined, `\x1b]52;c;Y3VybCBldmlsfHNo\a`) || !strings.Contains(joined, `\u2067rtl\u2069`) {
		t.Fatalf("notifications %q do not carry the guest's text escaped", joined)
	}
}
