package main

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolhost/toolhost/internal/testkit/testwasm"
	"github.com/toolhost/toolhost/transport"
)

// copyModule puts the module at src into dir as name.
func copyModule(t *testing.T, src, dir, name string) {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	tmp := filepath.Join(dir, "."+name+".tmp")
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, filepath.Join(dir, name)); err != nil {
		t.Fatal(err)
	}
}

// offerWatch is a client session that hears resources/list_changed and
// prompts/list_changed.
type offerWatch struct {
	*mcp.ClientSession
	srv              *server
	resources, promp chan struct{}
}

func watchOffers(t *testing.T, srv *server, hc *http.Client, version string) *offerWatch {
	t.Helper()
	w := &offerWatch{srv: srv, resources: make(chan struct{}, 64), promp: make(chan struct{}, 64)}
	ping := func(c chan struct{}) {
		select {
		case c <- struct{}{}:
		default:
		}
	}
	c := mcp.NewClient(&mcp.Implementation{Name: "e2e-offers", Version: "test"}, &mcp.ClientOptions{
		ResourceListChangedHandler: func(context.Context, *mcp.ResourceListChangedRequest) { ping(w.resources) },
		PromptListChangedHandler:   func(context.Context, *mcp.PromptListChangedRequest) { ping(w.promp) },
	})
	cs, err := c.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: srv.url, HTTPClient: hc}, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	w.ClientSession = cs
	return w
}

// wait takes one notification from c, within a bound only a broken
// server reaches.
func (w *offerWatch) wait(t *testing.T, c chan struct{}, what string) {
	t.Helper()
	select {
	case <-c:
	case <-time.After(2 * time.Minute):
		t.Fatalf("no %s notification; server log:\n%s", what, w.srv.stderr.String())
	}
}

func (w *offerWatch) uris(t *testing.T) []string {
	t.Helper()
	res, err := w.ListResources(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, r := range res.Resources {
		out = append(out, r.URI)
	}
	return out
}

func (w *offerWatch) promptNames(t *testing.T) []string {
	t.Helper()
	res, err := w.ListPrompts(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, p := range res.Prompts {
		out = append(out, p.Name)
	}
	return out
}

// TestE2EResourcesAndPrompts serves a folder without resources or prompts
// (the capabilities are not advertised, the methods refused), drops in a
// module that offers some (listed, read and got through the module, with
// its timeout), then one that lists its offers by code (clients hear
// list_changed), and takes that one away again (list_changed again).
func TestE2EResourcesAndPrompts(t *testing.T) {
	plugins := t.TempDir()
	copyModule(t, testwasm.Go(t, "./host/testdata/sdkcount"), plugins, "count.wasm")
	notes := testwasm.Go(t, "./host/testdata/notes")
	memo := testwasm.Go(t, "./host/testdata/memo")
	srv := startServer(t, plugins)

	tools := srv.watchTools(t)
	caps := tools.InitializeResult().Capabilities
	if caps.Resources != nil || caps.Prompts != nil {
		t.Fatalf("no module offers resources or prompts, yet the server advertises resources %+v, prompts %+v", caps.Resources, caps.Prompts)
	}
	if _, err := tools.ListResources(t.Context(), nil); err == nil || !strings.Contains(err.Error(), "not found") {
		t.Errorf("resources/list with nothing offered: %v", err)
	}
	if _, err := tools.ListPrompts(t.Context(), nil); err == nil {
		t.Error("prompts/list answered with nothing offered")
	}

	copyModule(t, notes, plugins, "notes.wasm")
	tools.await(t, "notes_count", true, "notes.wasm arrived")

	// A client that starts now is told of resources and prompts, and
	// subscribes to their changes.
	w := watchOffers(t, srv, nil, transport.Revision20260728)
	old := watchOffers(t, srv, nil, transport.Revision20251125) // a 2025 session
	cs := w.ClientSession
	caps = cs.InitializeResult().Capabilities
	if caps.Resources == nil || !caps.Resources.ListChanged || caps.Prompts == nil || !caps.Prompts.ListChanged {
		t.Fatalf("with notes.wasm the server advertises resources %+v, prompts %+v", caps.Resources, caps.Prompts)
	}
	want := []string{"notes://bad", "notes://logo", "notes://secret/plan", "notes://spin", "notes://todo"}
	if got := w.uris(t); !slices.Equal(got, want) {
		t.Errorf("resources/list = %v, want %v", got, want)
	}
	tpl, err := cs.ListResourceTemplates(t.Context(), nil)
	if err != nil || len(tpl.ResourceTemplates) != 1 || tpl.ResourceTemplates[0].URITemplate != "notes://day/{date}" {
		t.Errorf("resources/templates/list = %+v, %v", tpl, err)
	}
	if got := w.promptNames(t); !slices.Equal(got, []string{"review", "secret-prompt"}) {
		t.Errorf("prompts/list = %v", got)
	}

	read := func(uri string) (*mcp.ReadResourceResult, error) {
		return cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: uri})
	}
	if r, err := read("notes://todo"); err != nil || len(r.Contents) != 1 || r.Contents[0].Text != "buy milk\nwrite tests\n" || r.Contents[0].MIMEType != "text/plain" {
		t.Errorf("read notes://todo = %+v, %v", r, err)
	}
	if r, err := read("notes://logo"); err != nil || string(r.Contents[0].Blob) != "\x89PNG" {
		t.Errorf("read notes://logo = %+v, %v", r, err)
	}
	if r, err := read("notes://day/2026-12-02"); err != nil || r.Contents[0].Text != "notes of 2026-12-02" {
		t.Errorf("read through the template = %+v, %v", r, err)
	}
	if _, err := read("notes://nowhere/x"); err == nil {
		t.Error("a URI nothing offers was read")
	}
	if _, err := read("notes://bad"); err == nil || !strings.Contains(err.Error(), "at least one item") {
		t.Errorf("a read of the wrong shape: %v", err)
	}
	start := time.Now()
	if _, err := read("notes://spin"); err == nil || !strings.Contains(err.Error(), "timeout") {
		t.Errorf("a read that never ends: %v", err)
	} else if took := time.Since(start); took > time.Minute {
		t.Errorf("the spinning read took %v; its module's timeout is 2 s", took)
	}

	p, err := cs.GetPrompt(t.Context(), &mcp.GetPromptParams{Name: "review", Arguments: map[string]string{"lang": "Go"}})
	if err != nil || p.Description != "review in Go" || len(p.Messages) != 1 || p.Messages[0].Role != "user" ||
		p.Messages[0].Content.(*mcp.TextContent).Text != "Review this Go code." {
		t.Errorf("prompts/get review = %+v, %v", p, err)
	}
	if _, err := cs.GetPrompt(t.Context(), &mcp.GetPromptParams{Name: "review"}); err == nil || !strings.Contains(err.Error(), `argument "lang" is required`) {
		t.Errorf("prompts/get without a required argument: %v", err)
	}
	// The tool of the module still works beside its offers.
	if r, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "notes_count", Arguments: map[string]any{"text": "a b c"}}); err != nil || r.IsError {
		t.Errorf("notes.count: %+v, %v", r, err)
	}

	// A module that lists by code: its offers arrive after it loads.
	copyModule(t, memo, plugins, "memo.wasm")
	for !slices.Contains(w.uris(t), "memo://monday") {
		w.wait(t, w.resources, "resources/list_changed after memo.wasm arrived")
	}
	for !slices.Contains(w.promptNames(t), "memo-summary") {
		w.wait(t, w.promp, "prompts/list_changed after memo.wasm arrived")
	}
	for !slices.Contains(old.uris(t), "memo://monday") {
		old.wait(t, old.resources, "resources/list_changed in a 2025 session after memo.wasm arrived")
	}
	for !slices.Contains(old.promptNames(t), "memo-summary") {
		old.wait(t, old.promp, "prompts/list_changed in a 2025 session after memo.wasm arrived")
	}
	if r, err := old.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: "notes://day/x"}); err != nil || r.Contents[0].Text != "notes of x" {
		t.Errorf("a 2025 session reads through the template: %+v, %v", r, err)
	}
	if p, err := old.GetPrompt(t.Context(), &mcp.GetPromptParams{Name: "review", Arguments: map[string]string{"lang": "C"}}); err != nil || p.Description != "review in C" {
		t.Errorf("a 2025 session gets review: %+v, %v", p, err)
	}
	if r, err := read("memo://monday"); err != nil || r.Contents[0].Text != "standup at 9" {
		t.Errorf("read memo://monday = %+v, %v", r, err)
	}
	if p, err := cs.GetPrompt(t.Context(), &mcp.GetPromptParams{Name: "memo-summary"}); err != nil || !strings.Contains(p.Messages[0].Content.(*mcp.TextContent).Text, "demo at 4") {
		t.Errorf("prompts/get memo-summary = %+v, %v", p, err)
	}

	// The server's log comes through a pipe: a line may trail its answer.
	for _, line := range []string{`"msg":"read","request_id"`, `"resource":"notes://todo"`, `"outcome":"timeout"`, `"msg":"get"`, `"prompt":"review"`, `"msg":"plugin listed dynamic offers"`} {
		waitForLog(t, srv.stderr, line, "", 1)
	}

	if err := os.Remove(filepath.Join(plugins, "memo.wasm")); err != nil {
		t.Fatal(err)
	}
	for slices.Contains(w.uris(t), "memo://monday") {
		w.wait(t, w.resources, "resources/list_changed after memo.wasm left")
	}
	for slices.Contains(w.promptNames(t), "memo-summary") {
		w.wait(t, w.promp, "prompts/list_changed after memo.wasm left")
	}
	if _, err := read("memo://monday"); err == nil {
		t.Error("a resource of a removed module was read")
	}
}

// tokenRT adds a token to every request.
type tokenRT struct{ token string }

func (b tokenRT) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}

// TestE2EResourcesAccess: access rules by URI and prompt name hide what a
// caller may not have from its lists and refuse its reads and gets as if
// nothing had that name, with a denied audit line.
func TestE2EResourcesAccess(t *testing.T) {
	plugins := t.TempDir()
	copyModule(t, testwasm.Go(t, "./host/testdata/notes"), plugins, "notes.wasm")
	conf := writeFile(t, "toolhost.toml", `[[access]]
identities = ["alice"]
resources = ["notes://secret/*"]
prompts = ["secret-*"]
action = "deny"

[[access]]
identities = ["alice"]
tools = ["*"]
resources = ["notes://*"]
prompts = ["*"]
action = "allow"
`)
	srv := startServer(t, plugins, "--config", conf, "--token-file", boundsTokens(t))
	for _, rev := range []string{transport.Revision20251125, transport.Revision20260728} {
		t.Run(rev, func(t *testing.T) { checkOfferAccess(t, srv, rev) })
	}
}

func checkOfferAccess(t *testing.T, srv *server, rev string) {
	alice := watchOffers(t, srv, &http.Client{Transport: tokenRT{aliceToken}}, rev)
	bob := watchOffers(t, srv, &http.Client{Transport: tokenRT{bobToken}}, rev)

	if got := alice.uris(t); slices.Contains(got, "notes://secret/plan") || !slices.Contains(got, "notes://todo") {
		t.Errorf("alice's resources/list = %v", got)
	}
	if got := alice.promptNames(t); !slices.Equal(got, []string{"review"}) {
		t.Errorf("alice's prompts/list = %v", got)
	}
	if r, err := alice.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: "notes://todo"}); err != nil || len(r.Contents) != 1 {
		t.Errorf("alice reads notes://todo: %+v, %v", r, err)
	}
	_, denied := alice.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: "notes://secret/plan"})
	_, unknown := alice.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: "notes://none"})
	if denied == nil || unknown == nil || denied.Error() != strings.Replace(unknown.Error(), "notes://none", "notes://secret/plan", 1) {
		t.Errorf("alice's read of a denied resource: %v; of an unknown one: %v (want the same refusal)", denied, unknown)
	}
	_, denied = alice.GetPrompt(t.Context(), &mcp.GetPromptParams{Name: "secret-prompt"})
	_, unknown = alice.GetPrompt(t.Context(), &mcp.GetPromptParams{Name: "secret-none"})
	if denied == nil || unknown == nil || denied.Error() != strings.Replace(unknown.Error(), "secret-none", "secret-prompt", 1) {
		t.Errorf("alice's get of a denied prompt: %v; of an unknown one: %v (want the same refusal)", denied, unknown)
	}
	if got := bob.uris(t); len(got) != 0 {
		t.Errorf("bob, whom no rule names, lists %v", got)
	}
	if got := bob.promptNames(t); len(got) != 0 {
		t.Errorf("bob lists prompts %v", got)
	}
	if tpl, err := bob.ListResourceTemplates(t.Context(), nil); err != nil || len(tpl.ResourceTemplates) != 0 {
		t.Errorf("bob lists templates %+v, %v", tpl, err)
	}
	if _, err := bob.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: "notes://todo"}); err == nil {
		t.Error("bob read notes://todo")
	}
	if _, err := bob.GetPrompt(t.Context(), &mcp.GetPromptParams{Name: "review", Arguments: map[string]string{"lang": "Go"}}); err == nil {
		t.Error("bob got the review prompt")
	}
	// The server's log comes through a pipe: the last line may trail the
	// last answer.
	waitForLog(t, srv.stderr, `"resource":"notes://secret/plan","caller":"alice","outcome":"denied"`, "", 1)
	waitForLog(t, srv.stderr, `"prompt":"review","caller":"bob","outcome":"denied"`, "", 1)
}
