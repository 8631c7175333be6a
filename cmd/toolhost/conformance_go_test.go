package main

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolhost/toolhost/internal/testwasm"
)

// TestGoClient runs TestTypeScriptClient's scenario with the official Go
// SDK client, over Streamable HTTP and over stdio, and checks it the same
// way (checkTSSteps).
func TestGoClient(t *testing.T) {
	for _, transport := range []string{"http", "stdio"} {
		t.Run(transport, func(t *testing.T) {
			plugins := conformancePlugins(t)
			logs := &syncBuffer{}
			var tr mcp.Transport
			if transport == "http" {
				srv := startServer(t, plugins)
				logs = srv.stderr
				tr = &mcp.StreamableClientTransport{Endpoint: srv.url}
			} else {
				cmd := exec.Command(buildCLI(t), "serve", "--stdio", "--plugins", plugins,
					"--cache-dir", filepath.Join(os.TempDir(), "toolhost-test-cache"))
				cmd.Stderr = logs
				tr = &mcp.CommandTransport{Command: cmd}
			}
			steps := runGoClient(t, tr, conformanceScenario(transport), logs, plugins)
			checkTSSteps(t, steps, logs)
		})
	}
}

// runGoClient plays the scenario as client.mjs does, step for step.
func runGoClient(t *testing.T, tr mcp.Transport, sc conformance, logs *syncBuffer, plugins string) []tsStep {
	t.Helper()
	ctx := t.Context()
	changed := make(chan struct{}, 16)
	progress := make(chan struct{}, 1024)
	c := mcp.NewClient(&mcp.Implementation{Name: "toolhost-conformance-go", Version: "1.0.0"}, &mcp.ClientOptions{
		ToolListChangedHandler:      func(context.Context, *mcp.ToolListChangedRequest) { changed <- struct{}{} },
		ProgressNotificationHandler: func(context.Context, *mcp.ProgressNotificationClientRequest) { progress <- struct{}{} },
	})
	cs, err := c.Connect(ctx, tr, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	var steps []tsStep
	add := func(s tsStep) { steps = append(steps, s) }

	lr, err := cs.ListTools(ctx, nil)
	if err != nil {
		add(tsStep{Step: "fatal", Error: json.RawMessage(quote(err.Error()))})
		return steps
	}
	type listed struct{ Name, Manifest string }
	var ls []listed
	wire := map[string]string{}
	for _, tool := range lr.Tools {
		m := tool.Name
		if n, ok := tool.Meta["toolhost/name"].(string); ok {
			m = n
		}
		ls = append(ls, listed{tool.Name, m})
		wire[m], wire[tool.Name] = tool.Name, tool.Name
	}
	b, _ := json.Marshal(ls)
	add(tsStep{Step: "list", Tools: b})
	name := func(n string) string {
		if w, ok := wire[n]; ok {
			return w
		}
		return n
	}
	call := func(ctx context.Context, c tsCall) (*mcp.CallToolResult, error) {
		p := &mcp.CallToolParams{Name: name(c.Tool), Arguments: c.Args}
		if len(c.Meta) > 0 {
			p.Meta = mcp.Meta(c.Meta)
		}
		return cs.CallTool(ctx, p)
	}
	for _, c := range sc.Calls {
		r, err := call(ctx, c)
		if err != nil {
			add(tsStep{Step: "call", Tool: c.Tool, Thrown: &struct{ Name, Message string }{"error", err.Error()}})
			continue
		}
		s := tsStep{Step: "call", Tool: c.Tool, IsError: r.IsError}
		if e, ok := r.Meta["toolhost/error"]; ok {
			s.Error, _ = json.Marshal(e)
		}
		add(s)
	}
	attempts := 0
	for _, c := range sc.Cancels {
		cctx, cancel := context.WithCancel(ctx)
		done := make(chan error, 1)
		go func() {
			_, err := call(cctx, c)
			done <- err
		}()
		attempts++
		waitForLog(t, logs, `"msg":"dispatch.attempt"`, `"tool":"`+c.Tool+`"`, attempts)
		cancel() // the SDK sends notifications/cancelled
		if err := <-done; err != nil {
			add(tsStep{Step: "cancel", Tool: c.Tool, Thrown: &struct{ Name, Message string }{"cancelled", err.Error()}})
		} else {
			add(tsStep{Step: "cancel", Tool: c.Tool})
		}
	}
	if sc.ListChange {
		addEcho(t, plugins)
		<-changed
		lr, err := cs.ListTools(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, tool := range lr.Tools {
			if n, ok := tool.Meta["toolhost/name"].(string); ok {
				names = append(names, n)
			} else {
				names = append(names, tool.Name)
			}
		}
		b, _ := json.Marshal(names)
		add(tsStep{Step: "list_changed", Tools: b})
	}
	if sc.Plan != nil {
		p := &mcp.CallToolParams{Name: name("toolhost.plan"), Arguments: sc.Plan.Args}
		p.SetProgressToken("plan-progress")
		r, err := cs.CallTool(ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		add(tsStep{Step: "plan", IsError: r.IsError, Progress: len(progress)})
	}
	r, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name("text.count"), Arguments: map[string]any{"text": "still here"}})
	if err != nil {
		t.Fatal(err)
	}
	add(tsStep{Step: "alive", IsError: r.IsError})
	add(tsStep{Step: "done"})
	return steps
}

func quote(s string) string { b, _ := json.Marshal(s); return string(b) }

// conformancePlugins is the example tools and the misbehaving module.
func conformancePlugins(t *testing.T) string {
	t.Helper()
	return testwasm.Dir(t,
		testwasm.Go(t, "./tools-src/text"),
		testwasm.Go(t, "./tools-src/jsontools"),
		testwasm.Go(t, "./tools-src/mathtools"),
		testwasm.Go(t, "./tools-src/hashtools"),
		testwasm.Go(t, "./tools-src/time"),
		testwasm.Go(t, "./host/testdata/misbehave"),
	)
}

// addEcho drops the WAT echo module into the plugins folder, atomically.
func addEcho(t *testing.T, plugins string) {
	t.Helper()
	b, err := os.ReadFile(testwasm.WAT(t, "host/testdata/wat/echo.wat"))
	if err != nil {
		t.Fatal(err)
	}
	tmp := filepath.Join(plugins, ".echo.tmp")
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, filepath.Join(plugins, "echo.wasm")); err != nil {
		t.Fatal(err)
	}
}
