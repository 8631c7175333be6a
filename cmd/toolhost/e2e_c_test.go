package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolhost/toolhost/internal/testkit/testwasm"
)

// TestCGuest: the C example tool, built from source with clang and
// abi/c/toolhost.h, served and called end to end: results through the
// SDK's JSON writer (escapes, non-ASCII, a lone surrogate made U+FFFD so
// the response stays valid UTF-8), and a large text in one call.
func TestCGuest(t *testing.T) {
	wasm := testwasm.C(t, "tools-src-c/wordfreq")
	srv := startServer(t, testwasm.Dir(t, wasm))

	out, errOut, code := srv.cli(t, "call", "wordfreq.top", `{"text":"The cat and the hat. THE end, isn't it? café café \"q\" \\ tab\there","top":3}`)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var got struct {
		Words, Unique int
		Top           []struct {
			Word  string
			Count int
		}
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("%s: %v", out, err)
	}
	if got.Words != 14 || got.Unique != 11 || len(got.Top) != 3 ||
		got.Top[0].Word != "the" || got.Top[0].Count != 3 || got.Top[1].Word != "café" || got.Top[1].Count != 2 {
		t.Fatalf("wordfreq.top = %s", out)
	}

	// A lone surrogate escape reaches the guest as JSON text; the SDK's
	// unescaping and writer turn it into U+FFFD.
	out, errOut, code = srv.cli(t, "call", "wordfreq.top", `{"text":"x \ud800 y"}`)
	if code != 0 || !strings.Contains(out, "\ufffd") {
		t.Fatalf("lone surrogate: exit %d, %s %s", code, out, errOut)
	}

	// Escapes in the arguments, read by the SDK's JSON reader: \n and \t
	// separate words (read raw, "line\none" would be "line" and "none"),
	// \\n is a backslash and an n, \u0027 an apostrophe inside a word, a
	// surrogate pair one emoji, \" a quote; the words come back exactly.
	out, errOut, code = srv.cli(t, "call", "wordfreq.top",
		`{"text":"say \"hi\" now\nline\tone\\nthree it\u0027s caf\u00e9 \ud83d\ude00 \"hi\"","top":20}`)
	if code != 0 {
		t.Fatalf("escaped text: exit %d: %s", code, errOut)
	}
	got.Top = nil
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("%s: %v", out, err)
	}
	words := map[string]int{}
	for _, w := range got.Top {
		words[w.Word] = w.Count
	}
	want := map[string]int{"hi": 2, "say": 1, "now": 1, "line": 1, "one": 1, "nthree": 1, "it's": 1, "café": 1, "😀": 1}
	if got.Words != 10 || got.Unique != len(want) || len(words) != len(want) {
		t.Fatalf("escaped text: %s, want the words %v", out, want)
	}
	for w, n := range want {
		if words[w] != n {
			t.Fatalf("escaped text: %q counted %d, want %d (%s)", w, words[w], n, out)
		}
	}

	cs := srv.client(t)
	for _, tc := range []struct{ name, text, want string }{
		{"quote and backslash in a word", `it's "x"`, `"word":"it's"`},
		{"control characters", "a\u0001b", `"word":"a"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "wordfreq.top", Arguments: map[string]any{"text": tc.text}})
			if err != nil || r.IsError {
				t.Fatalf("call: %v %+v", err, r)
			}
			b, _ := json.Marshal(r.StructuredContent)
			if !strings.Contains(string(b), tc.want) {
				t.Fatalf("result %s, want it to contain %s", b, tc.want)
			}
		})
	}

	big := strings.Repeat("alpha beta gamma beta ", 40000) // 880 KB
	r, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "wordfreq.top", Arguments: map[string]any{"text": big, "top": 1}})
	if err != nil || r.IsError {
		t.Fatalf("big call: %v %+v", err, r)
	}
	if b, _ := json.Marshal(r.StructuredContent); !strings.Contains(string(b), `{"count":80000,"word":"beta"}`) {
		t.Fatalf("big call = %s", b)
	}
}
