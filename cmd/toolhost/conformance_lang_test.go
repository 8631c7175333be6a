package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/toolhost/toolhost/internal/testkit/testwasm"
)

// langCalls are one tool of each language's example module, with a part
// of its answer: Go (tools-src/text), C (tools-src-c/wordfreq), Rust
// (tools-src-rust/csv) and AssemblyScript (tools-src-as/textkit).
var langCalls = []struct {
	lang string
	call tsCall
	want string
}{
	{"go", tsCall{Tool: "text.count", Args: json.RawMessage(`{"text":"a b c"}`)}, `"words":3`},
	{"c", tsCall{Tool: "wordfreq.top", Args: json.RawMessage(`{"text":"the cat and the hat","top":1}`)}, `"word":"the"`},
	{"rust", tsCall{Tool: "csv.parse", Args: json.RawMessage(`{"text":"a,b\n1,x\n"}`)}, `"a"`},
	{"as", tsCall{Tool: "textkit.slug", Args: json.RawMessage(`{"text":"Hello, World!"}`)}, `"hello-world"`},
}

// TestClientsCallEachLanguage: the official TypeScript SDK client and the
// Go SDK client each call one tool of every language's SDK through one
// server, and get its answer.
func TestClientsCallEachLanguage(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a module in each language")
	}
	plugins := testwasm.Dir(t, testwasm.Go(t, "./tools-src/text"), testwasm.C(t, "tools-src-c/wordfreq"),
		testwasm.Rust(t, "tools-src-rust/csv"), testwasm.AS(t, "tools-src-as/textkit"))
	srv := startServer(t, plugins)

	t.Run("go-sdk", func(t *testing.T) {
		cs := srv.watchTools(t)
		for _, lc := range langCalls {
			var args map[string]any
			_ = json.Unmarshal(lc.call.Args, &args)
			cs.await(t, strings.ReplaceAll(lc.call.Tool, ".", "_"), true, "the "+lc.lang+" module listed")
			res := callTool(t, cs.ClientSession, lc.call.Tool, args, nil)
			if got := textOf(res); res.IsError || !strings.Contains(got, lc.want) {
				t.Errorf("%s (%s): isError=%v %s, want %s", lc.call.Tool, lc.lang, res.IsError, got, lc.want)
			}
		}
	})
	t.Run("typescript-sdk", func(t *testing.T) {
		var calls []tsCall
		for _, lc := range langCalls {
			calls = append(calls, lc.call)
		}
		steps := runTSClient(t, tsDir(t), map[string]any{"transport": "http", "url": srv.url, "calls": calls}, srv.stderr, plugins)
		var got []tsStep
		for _, s := range steps {
			if s.Step == "call" {
				got = append(got, s)
			}
		}
		if len(got) != len(langCalls) {
			t.Fatalf("%d call steps, want %d: %+v", len(got), len(langCalls), steps)
		}
		for i, lc := range langCalls {
			if c := got[i]; c.Thrown != nil || c.IsError || !strings.Contains(c.Text, lc.want) {
				t.Errorf("%s (%s): isError=%v thrown=%v %s, want %s", lc.call.Tool, lc.lang, c.IsError, c.Thrown, c.Text, lc.want)
			}
		}
	})
}
