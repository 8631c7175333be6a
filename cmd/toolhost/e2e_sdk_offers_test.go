package main

import (
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolhost/toolhost/internal/testkit/testwasm"
)

// The resources and prompts of the C, Rust and AssemblyScript example
// tools, built from source and served, as an MCP client lists, reads and
// gets them: each SDK's manifest entries, its reserved-call dispatch and
// its typed content writers, end to end.

// offerClient is a client session with the listing helpers of the
// resources e2e tests.
func offerClient(t *testing.T, srv *server) *offerWatch {
	t.Helper()
	return watchOffers(t, srv, nil, "")
}

// promptText is the text of a prompt's message i, or "" when it has no
// text content.
func promptText(p *mcp.GetPromptResult, i int) string {
	if p == nil || i >= len(p.Messages) {
		return ""
	}
	if tc, ok := p.Messages[i].Content.(*mcp.TextContent); ok {
		return tc.Text
	}
	return ""
}

// TestCGuestOffers: wordfreq (C) offers the resource wordfreq://rules
// and the prompt wordfreq.keywords, whose message carries the text's word
// counts worked out by the tool's own counting code.
func TestCGuestOffers(t *testing.T) {
	srv := startServer(t, testwasm.Dir(t, testwasm.C(t, "tools-src-c/wordfreq")))
	w := offerClient(t, srv)
	if caps := w.InitializeResult().Capabilities; caps.Resources == nil || caps.Prompts == nil {
		t.Fatalf("capabilities %+v: want resources and prompts", caps)
	}
	if got := w.uris(t); !slices.Equal(got, []string{"wordfreq://rules"}) {
		t.Fatalf("resources/list = %v", got)
	}
	r, err := w.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: "wordfreq://rules"})
	if err != nil || len(r.Contents) != 1 || r.Contents[0].URI != "wordfreq://rules" || r.Contents[0].MIMEType != "text/plain" ||
		!strings.HasPrefix(r.Contents[0].Text, "A word is a run of ASCII letters") || !strings.Contains(r.Contents[0].Text, `"it's"`) {
		t.Fatalf("read wordfreq://rules = %+v, %v", r, err)
	}

	lp, err := w.ListPrompts(t.Context(), nil)
	if err != nil || len(lp.Prompts) != 1 || lp.Prompts[0].Name != "wordfreq.keywords" || len(lp.Prompts[0].Arguments) != 2 ||
		!lp.Prompts[0].Arguments[0].Required || lp.Prompts[0].Arguments[1].Required {
		t.Fatalf("prompts/list = %+v, %v", lp, err)
	}
	text := "The cat sat. The cat ran! A \"dog\" and café, café, CAFÉ."
	p, err := w.GetPrompt(t.Context(), &mcp.GetPromptParams{Name: "wordfreq.keywords", Arguments: map[string]string{"text": text, "top": "3"}})
	if err != nil {
		t.Fatal(err)
	}
	msg := promptText(p, 0)
	if p.Description != "keywords of a text of 12 words" || len(p.Messages) != 1 || p.Messages[0].Role != "user" ||
		!strings.Contains(msg, "has 12 words, 9 of them distinct") ||
		!strings.Contains(msg, "Its most frequent words, with their counts: caf\u00e9 (2), cat (2), the (2).") ||
		!strings.HasSuffix(msg, "\n\n"+text) {
		t.Fatalf("prompts/get wordfreq.keywords = %+v\n%s", p, msg)
	}
	// The prompt's own check of an argument is a schema error (invalid
	// params); the host's of a missing required one comes first.
	if _, err := w.GetPrompt(t.Context(), &mcp.GetPromptParams{Name: "wordfreq.keywords", Arguments: map[string]string{"text": "x", "top": "many"}}); err == nil ||
		!strings.Contains(err.Error(), "top must be a whole number from 1 to 50") {
		t.Errorf("top=many: %v", err)
	}
	if _, err := w.GetPrompt(t.Context(), &mcp.GetPromptParams{Name: "wordfreq.keywords"}); err == nil || !strings.Contains(err.Error(), `argument "text" is required`) {
		t.Errorf("no text: %v", err)
	}
	if _, err := w.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: "wordfreq://nothing"}); err == nil {
		t.Error("read a URI wordfreq does not offer")
	}
	// The tool is served beside its offers, as before.
	if res, err := w.CallTool(t.Context(), &mcp.CallToolParams{Name: "wordfreq_top", Arguments: map[string]any{"text": text, "top": 1}}); err != nil || res.IsError {
		t.Fatalf("wordfreq.top: %+v, %v", res, err)
	}
}

// TestRustGuestOffers: csv (Rust) offers csv://types, the template
// csv://types/{type} and the prompt csv.describe, whose message carries
// the columns csv.parse typed.
func TestRustGuestOffers(t *testing.T) {
	srv := startServer(t, testwasm.Dir(t, testwasm.Rust(t, "tools-src-rust/csv")))
	w := offerClient(t, srv)
	if got := w.uris(t); !slices.Equal(got, []string{"csv://types"}) {
		t.Fatalf("resources/list = %v", got)
	}
	tpl, err := w.ListResourceTemplates(t.Context(), nil)
	if err != nil || len(tpl.ResourceTemplates) != 1 || tpl.ResourceTemplates[0].URITemplate != "csv://types/{type}" {
		t.Fatalf("resources/templates/list = %+v, %v", tpl, err)
	}
	r, err := w.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: "csv://types"})
	if err != nil || len(r.Contents) != 1 || r.Contents[0].MIMEType != "text/markdown" ||
		!strings.Contains(r.Contents[0].Text, "\n- integer: every non-empty cell is a whole number") || strings.Count(r.Contents[0].Text, "\n- ") != 5 {
		t.Fatalf("read csv://types = %+v, %v", r, err)
	}
	// Through the template: the SDK hands the handler the variable.
	r, err = w.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: "csv://types/boolean"})
	if err != nil || len(r.Contents) != 1 || r.Contents[0].URI != "csv://types/boolean" ||
		r.Contents[0].Text != "boolean: every non-empty cell is true or false, in any case\n" {
		t.Fatalf("read csv://types/boolean = %+v, %v", r, err)
	}
	if _, err := w.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: "csv://types/date"}); err == nil || !strings.Contains(err.Error(), "no column type") {
		t.Errorf("read csv://types/date: %v", err)
	}

	p, err := w.GetPrompt(t.Context(), &mcp.GetPromptParams{Name: "csv.describe",
		Arguments: map[string]string{"text": "city,pop,coastal\n\"Brest, FR\",139000,true\nLyon,513000,false\nNice,,true\n"}})
	if err != nil {
		t.Fatal(err)
	}
	msg := promptText(p, 0)
	if p.Description != "describe a CSV of 3 rows" || len(p.Messages) != 1 || p.Messages[0].Role != "user" ||
		!strings.HasPrefix(msg, "A CSV file of 3 rows and 3 columns:\n- city: string, 3 values, 0 empty\n"+
			"- pop: integer, 2 values, 1 empty, from 139000 to 513000, mean 326000\n- coastal: boolean, 3 values, 0 empty\n") ||
		!strings.Contains(msg, "Brest, FR | 139000 | true\n") {
		t.Fatalf("prompts/get csv.describe = %+v\n%s", p, msg)
	}
	// A CSV the parser refuses is the prompt's schema error.
	if _, err := w.GetPrompt(t.Context(), &mcp.GetPromptParams{Name: "csv.describe", Arguments: map[string]string{"text": "a,b\n1,2,3\n"}}); err == nil ||
		!strings.Contains(err.Error(), "record 2 has 3 fields, want 2") {
		t.Errorf("ragged CSV: %v", err)
	}
}

// TestASGuestOffers: textkit (AssemblyScript) offers textkit://rules and
// the prompt textkit.group, whose message carries the list tallied as
// textkit.uniq tallies it.
func TestASGuestOffers(t *testing.T) {
	srv := startServer(t, testwasm.Dir(t, testwasm.AS(t, "tools-src-as/textkit")))
	w := offerClient(t, srv)
	if got := w.uris(t); !slices.Equal(got, []string{"textkit://rules"}) {
		t.Fatalf("resources/list = %v", got)
	}
	r, err := w.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: "textkit://rules"})
	if err != nil || len(r.Contents) != 1 || r.Contents[0].MIMEType != "text/plain" || !strings.HasPrefix(r.Contents[0].Text, "textkit.slug lowercases the text") {
		t.Fatalf("read textkit://rules = %+v, %v", r, err)
	}
	lp, err := w.ListPrompts(t.Context(), nil)
	if err != nil || len(lp.Prompts) != 1 || lp.Prompts[0].Name != "textkit.group" || len(lp.Prompts[0].Arguments) != 2 || !lp.Prompts[0].Arguments[0].Required {
		t.Fatalf("prompts/list = %+v, %v", lp, err)
	}
	p, err := w.GetPrompt(t.Context(), &mcp.GetPromptParams{Name: "textkit.group",
		Arguments: map[string]string{"lines": "apple\nPear\n  pear \n\ncarrot\nApple\napple\n\"leek\" é", "ignore_case": "true"}})
	if err != nil {
		t.Fatal(err)
	}
	msg := promptText(p, 0)
	if p.Description != "group 4 distinct values" || len(p.Messages) != 1 || p.Messages[0].Role != "user" ||
		!strings.HasPrefix(msg, "These 7 values hold 4 distinct ones, most frequent first:\n- apple (3)\n- pear (2)\n- \"leek\" é (1)\n- carrot (1)\n\nGroup") {
		t.Fatalf("prompts/get textkit.group = %+v\n%s", p, msg)
	}
	if _, err := w.GetPrompt(t.Context(), &mcp.GetPromptParams{Name: "textkit.group", Arguments: map[string]string{"lines": "a", "ignore_case": "yes"}}); err == nil ||
		!strings.Contains(err.Error(), "ignore_case must be") {
		t.Errorf("ignore_case=yes: %v", err)
	}
}

// TestASGuestDynamicOffers: the AssemblyScript SDK's template variables,
// binary contents, module timeout and offers listed by code
// (abi/assemblyscript/testdata/offers), through an MCP client.
func TestASGuestDynamicOffers(t *testing.T) {
	srv := startServer(t, testwasm.Dir(t, testwasm.AS(t, "abi/assemblyscript/testdata/offers")))
	w := offerClient(t, srv)
	for !slices.Contains(w.uris(t), "asoffers://later") {
		w.wait(t, w.resources, "resources/list_changed after the dynamic listing")
	}
	if got := w.uris(t); !slices.Equal(got, []string{"asoffers://later", "asoffers://logo"}) {
		t.Errorf("resources/list = %v", got)
	}
	r, err := w.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: "asoffers://logo"})
	if err != nil || len(r.Contents) != 1 || string(r.Contents[0].Blob) != "\x89PNG\r" || r.Contents[0].MIMEType != "image/png" {
		t.Errorf("read asoffers://logo = %+v, %v", r, err)
	}
	r, err = w.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: "asoffers://day/2026-12-02/a/b"})
	if err != nil || len(r.Contents) != 1 || r.Contents[0].Text != "day 2026-12-02, then a/b" {
		t.Errorf("read through the template = %+v, %v", r, err)
	}
	r, err = w.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: "asoffers://later"})
	if err != nil || len(r.Contents) != 1 || r.Contents[0].Text != "listed by code" {
		t.Errorf("read asoffers://later = %+v, %v", r, err)
	}
	for !slices.Contains(w.promptNames(t), "asoffers.later") {
		w.wait(t, w.promp, "prompts/list_changed after the dynamic listing")
	}
	p, err := w.GetPrompt(t.Context(), &mcp.GetPromptParams{Name: "asoffers.later", Arguments: map[string]string{"who": "ada"}})
	if err != nil || p.Description != "asoffers.later" || len(p.Messages) != 2 || promptText(p, 0) != "hello ada" ||
		p.Messages[1].Role != "assistant" || promptText(p, 1) != "hi" {
		t.Errorf("prompts/get asoffers.later = %+v, %v", p, err)
	}
}
