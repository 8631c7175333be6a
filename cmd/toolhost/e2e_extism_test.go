package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolhost/toolhost/internal/testkit/testwasm"
	"github.com/toolhost/toolhost/transport"
)

// TestExtismPluginsServed: go-pdk plugins speaking hyper-mcp's v1 and v2
// interfaces, served by toolhost serve and called with the Go SDK client,
// under toolhost's guarantees: the tool's deadline stops a busy loop, the
// memory cap stops a hog, http_request goes only where the grant allows,
// vars live in the caller's warm instance, progress and logs reach the
// client, and config_get reads the operator's extism_config.
func TestExtismPluginsServed(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		fmt.Fprint(w, "pong")
	}))
	defer up.Close()
	dir := t.TempDir()
	for name, pkg := range map[string]string{"ext.wasm": "./host/testdata/extism/v2", "extv1.wasm": "./host/testdata/extism/v1"} {
		b, err := os.ReadFile(testwasm.Go(t, pkg))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	conf := writeFile(t, "toolhost.toml", fmt.Sprintf(`[grants."ext.wasm"]
hosts = ["%s"]
schemes = ["http"]
allow_networks = ["127.0.0.0/8"]

[modules."ext.wasm"]
snapshot = true

[modules."ext.wasm".extism_config]
greeting = "hej"

[modules."ext.wasm".keyring."context7"]
api_key = {env = "TOOLHOST_E2E_KEYRING"}

[tools.spin]
timeout = "300ms"

[tools.hog]
memory = "32MiB"
`, strings.TrimPrefix(up.URL, "http://")))
	srv := startServerEnv(t, []string{"TOOLHOST_E2E_KEYRING=k3y"}, dir, "--config", conf)

	var mu sync.Mutex
	var notes []string
	arrived := make(chan struct{}, 64)
	c := mcp.NewClient(&mcp.Implementation{Name: "e2e-extism", Version: "test"}, &mcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, r *mcp.ProgressNotificationClientRequest) {
			mu.Lock()
			defer mu.Unlock()
			notes = append(notes, fmt.Sprintf("progress %v/%v %s", r.Params.Progress, r.Params.Total, r.Params.Message))
			arrived <- struct{}{}
		},
		LoggingMessageHandler: func(_ context.Context, r *mcp.LoggingMessageRequest) {
			mu.Lock()
			defer mu.Unlock()
			notes = append(notes, fmt.Sprintf("log %s %v", r.Params.Level, r.Params.Data))
			arrived <- struct{}{}
		},
	})
	ctx := t.Context()
	cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: srv.url}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()

	lr, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	listed := map[string]*mcp.Tool{}
	for _, tool := range lr.Tools {
		listed[tool.Name] = tool
	}
	for _, name := range []string{"echo", "fail", "spin", "hog", "fetch", "notes", "config", "hello"} {
		if listed[name] == nil {
			t.Fatalf("tool %s not listed; listed %v", name, lr.Tools)
		}
	}
	if a := listed["echo"].Annotations; a == nil || !a.ReadOnlyHint || !a.IdempotentHint {
		t.Errorf("echo annotations = %+v, want the plugin's hints", a)
	}
	if a := listed["fetch"].Annotations; a == nil || a.OpenWorldHint == nil || !*a.OpenWorldHint {
		t.Errorf("fetch annotations = %+v, want open world (granted, imports http_request)", a)
	}

	call := func(name, args string) *mcp.CallToolResult {
		t.Helper()
		a := map[string]any{}
		if args != "" {
			if err := json.Unmarshal([]byte(args), &a); err != nil {
				t.Fatal(err)
			}
		}
		p := &mcp.CallToolParams{Name: name, Arguments: a}
		if name == "notes" {
			p.Meta = mcp.Meta{mcp.MetaKeyLogLevel: "debug"}
			p.SetProgressToken("ext-progress")
		}
		r, err := cs.CallTool(ctx, p)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return r
	}
	text := func(r *mcp.CallToolResult) string {
		var b strings.Builder
		for _, c := range r.Content {
			if tc, ok := c.(*mcp.TextContent); ok {
				b.WriteString(tc.Text)
			}
		}
		return b.String()
	}
	for i, want := range []string{`{"calls":1,"text":"hi"}`, `{"calls":2,"text":"hi"}`} {
		if r := call("echo", `{"text":"hi"}`); r.IsError || text(r) != want {
			t.Errorf("echo %d = %s (isError %v), want %s from one warm instance", i+1, text(r), r.IsError, want)
		}
	}
	if r := call("hello", `{"name":"bob"}`); r.IsError || text(r) != `"hello, bob"` {
		t.Errorf("v1 hello = %s", text(r))
	}
	for _, tc := range []struct{ name, args, want string }{
		{"fail", "", "toolhost error (internal): it failed on purpose"},
		{"spin", "", "toolhost error (timeout)"},
		{"hog", `{"kernel":false}`, "out of memory"},
		{"hog", `{"kernel":true}`, "over its 33554432-byte limit"},
		{"echo", `{}`, "toolhost error (schema)"},
	} {
		if r := call(tc.name, tc.args); !r.IsError || !strings.Contains(text(r), tc.want) {
			t.Errorf("%s %s = %s (isError %v), want an error saying %q", tc.name, tc.args, text(r), r.IsError, tc.want)
		}
	}
	if r := call("fetch", `{"url":"`+up.URL+`/ping"}`); r.IsError || text(r) != `{"body":"pong","status":200,"type":"text/plain"}` {
		t.Errorf("fetch granted = %s", text(r))
	}
	if r := call("fetch", `{"url":"http://example.invalid/"}`); !r.IsError || !strings.Contains(text(r), "is not granted to module ext.wasm") {
		t.Errorf("fetch of a host not granted = %s, want the grant's refusal", text(r))
	}
	if r := call("config", ""); r.IsError || text(r) != `{"greeting":"hej","set":true}` {
		t.Errorf("config = %s", text(r))
	}
	if r := call("keyring", `{"service":"context7","user":"api_key"}`); r.IsError || text(r) != `"k3y"` {
		t.Errorf("keyring = %s, want the secret of the operator's {env} reference", text(r))
	}
	if r := call("keyring", `{"service":"context7","user":"root"}`); !r.IsError ||
		!strings.Contains(text(r), `map one with [modules."ext.wasm".keyring."context7"] root = {env = "NAME"}`) {
		t.Errorf("keyring of an entry not mapped = %s, want the refusal naming the section", text(r))
	}
	if r := call("token", ""); !r.IsError || !strings.Contains(text(r), "get_access_token: not supported by toolhost") {
		t.Errorf("token = %s, want get_access_token refused at call time", text(r))
	}
	if r := call("notes", ""); r.IsError || text(r) != `"done"` {
		t.Errorf("notes = %s", text(r))
	}
	// Resources and prompts of the v2 plugin, listed, read and got.
	resources, err := cs.ListResources(ctx, nil)
	if err != nil || len(resources.Resources) != 1 || resources.Resources[0].URI != "ext://greeting" {
		t.Errorf("resources/list = %+v, %v", resources, err)
	}
	read, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "ext://greeting"})
	if err != nil || len(read.Contents) != 1 || read.Contents[0].Text != "hello from a plugin" {
		t.Errorf("resources/read = %+v, %v", read, err)
	}
	prompt, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "review", Arguments: map[string]string{"lang": "go"}})
	if err != nil || len(prompt.Messages) != 1 {
		t.Fatalf("prompts/get = %+v, %v", prompt, err)
	}
	if tc, ok := prompt.Messages[0].Content.(*mcp.TextContent); !ok || tc.Text != "Review this go code." {
		t.Errorf("prompts/get message = %+v", prompt.Messages[0].Content)
	}
	// The plugin exports complete, but toolhost serves no completion for
	// any module (docs/WRITING-EXTISM.md, "Not supported").
	if res, err := cs.Complete(ctx, &mcp.CompleteParams{Ref: &mcp.CompleteReference{Type: "ref/prompt", Name: "review"},
		Argument: mcp.CompleteParamsArgument{Name: "lang", Value: "g"}}); err == nil || !strings.Contains(err.Error(), `method "completion/complete" not found`) {
		t.Errorf("completion/complete = %+v, %v, want method not found", res, err)
	}
	if r := call("changed", ""); r.IsError || text(r) != `"noted"` {
		t.Errorf("changed = %s", text(r))
	}
	if lr2, err := cs.ListTools(ctx, nil); err != nil || len(lr2.Tools) != len(lr.Tools) {
		t.Errorf("tools/list after notify_tool_list_changed: %d tools, %v; want the %d read at load", len(lr2.Tools), err, len(lr.Tools))
	}
	// ext.wasm's calls above started from its snapshot ([modules."ext.wasm"]
	// snapshot = true): the server said so, and never that it could not.
	if log := srv.stderr.String(); !strings.Contains(log, "its instances start from it") || strings.Contains(log, "cannot start from a snapshot") {
		t.Errorf("server log has no snapshot of ext.wasm, or a refusal:\n%s", log)
	}

	// Notifications are handled on the client's own goroutines: wait for
	// them (or the test's deadline).
	for {
		mu.Lock()
		got := strings.Join(notes, "; ")
		mu.Unlock()
		if strings.Contains(got, "log info working") && strings.Contains(got, "progress 2/2 step") {
			break
		}
		select {
		case <-arrived:
		case <-time.After(30 * time.Second):
			t.Fatalf("notes = %q, want the plugin's log and its last progress", got)
		}
	}
}

// TestExtismElicitationServed: a plugin's create_elicitation reaches the
// Go SDK client as elicitation (input_required and a retry at 2026-07-28,
// elicitation/create at 2025-11-25), one question per round, and the
// plugin finishes with both answers.
func TestExtismElicitationServed(t *testing.T) {
	b, err := os.ReadFile(testwasm.Go(t, "./host/testdata/extism/v2"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "ext.wasm"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	srv := startServer(t, dir)
	for _, version := range []string{transport.Revision20260728, transport.Revision20251125} {
		t.Run(version, func(t *testing.T) {
			var mu sync.Mutex
			var asked []string
			c := mcp.NewClient(&mcp.Implementation{Name: "e2e-extism", Version: "test"}, &mcp.ClientOptions{
				ElicitationHandler: func(_ context.Context, r *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
					mu.Lock()
					asked = append(asked, r.Params.Message)
					mu.Unlock()
					if r.Params.Message == "Your name?" {
						return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "ann"}}, nil
					}
					return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"sure": true}}, nil
				}})
			cs, err := c.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: srv.url}, &mcp.ClientSessionOptions{ProtocolVersion: version})
			if err != nil {
				t.Fatal(err)
			}
			defer cs.Close()
			r, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "ask", Arguments: map[string]any{}})
			if err != nil {
				t.Fatal(err)
			}
			got, _ := json.Marshal(r.StructuredContent)
			if r.IsError || string(got) != `{"action":"accept","name":{"name":"ann"},"sure":{"sure":true}}` {
				t.Errorf("ask = %s (isError %v, %+v)", got, r.IsError, r.Content)
			}
			mu.Lock()
			defer mu.Unlock()
			if strings.Join(asked, "|") != "Your name?|Sure?" {
				t.Errorf("asked %q, want the name, then the confirmation", asked)
			}
		})
	}
}
