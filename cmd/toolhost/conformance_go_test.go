package main

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolhost/toolhost/internal/testkit/testwasm"
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
					"--cache-dir", testCache)
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
	notes := &goNotes{ready: make(chan struct{})}
	c := mcp.NewClient(&mcp.Implementation{Name: "toolhost-conformance-go", Version: "1.0.0"}, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { changed <- struct{}{} },
		ProgressNotificationHandler: func(_ context.Context, r *mcp.ProgressNotificationClientRequest) {
			if !notes.progress(r.Params) {
				progress <- struct{}{}
			}
		},
		LoggingMessageHandler: func(_ context.Context, r *mcp.LoggingMessageRequest) { notes.log(r.Params) },
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
	if sc.Progress != nil {
		// 2026-07-28: the log level travels in the request's _meta.
		p := &mcp.CallToolParams{Name: name(sc.Progress.Tool), Arguments: sc.Progress.Args,
			Meta: mcp.Meta{mcp.MetaKeyLogLevel: "info"}}
		p.SetProgressToken(notesToken)
		r, err := cs.CallTool(ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		add(notes.step(t, sc.Progress.Tool, r))
	}
	if sc.Plan != nil {
		p := &mcp.CallToolParams{Name: name("toolhost.plan"), Arguments: sc.Plan.Args}
		p.SetProgressToken("plan-progress")
		r, err := cs.CallTool(ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		// The SDK hands notifications to the handler asynchronously: wait
		// (bounded, nothing asserted about how long) for the first one.
		n := 0
		select {
		case <-progress:
			n = 1 + len(progress)
		case <-time.After(2 * time.Minute):
		}
		add(tsStep{Step: "plan", IsError: r.IsError, Progress: n})
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

// notesToken marks the progress of the scenario's progress call.
const notesToken = "notes-progress"

// goNotes records what the Go client hears of the progress call, as
// client.mjs does: the SDK calls the handlers on its own goroutines.
type goNotes struct {
	mu       sync.Mutex
	seen     []*mcp.ProgressNotificationParams
	messages []*mcp.LoggingMessageParams
	ready    chan struct{} // closed once the last progress and a guest message came
	closed   bool
}

// progress records p if it belongs to the progress call.
func (n *goNotes) progress(p *mcp.ProgressNotificationParams) bool {
	if p.ProgressToken != notesToken {
		return false
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	n.seen = append(n.seen, p)
	n.check()
	return true
}

func (n *goNotes) log(p *mcp.LoggingMessageParams) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.messages = append(n.messages, p)
	n.check()
}

// check closes ready when the last progress (progress == total, which the
// host always sends) and a message from the guest have come.
func (n *goNotes) check() {
	last := len(n.seen) > 0 && n.seen[len(n.seen)-1].Progress == n.seen[len(n.seen)-1].Total
	guest := false
	for _, m := range n.messages {
		guest = guest || m.Logger != "toolhost"
	}
	if last && guest && !n.closed {
		n.closed = true
		close(n.ready)
	}
}

// step is the progress step client.mjs prints. A request's notifications
// precede its response on its stream, but the SDK hands them to the
// handlers asynchronously: this waits for them, failing after a generous
// bound (nothing is asserted about how long they took).
func (n *goNotes) step(t *testing.T, tool string, r *mcp.CallToolResult) tsStep {
	t.Helper()
	select {
	case <-n.ready:
	case <-time.After(2 * time.Minute):
		t.Errorf("the last progress notification or the guest's log message never came")
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	s := tsStep{Step: "progress", Tool: tool, IsError: r.IsError, Progress: len(n.seen), Increasing: true}
	s.Structured, _ = json.Marshal(r.StructuredContent)
	for i, p := range n.seen {
		if i > 0 && p.Progress <= n.seen[i-1].Progress {
			s.Increasing = false
		}
		s.Last = &struct {
			Progress, Total float64
			Message         string
		}{p.Progress, p.Total, p.Message}
	}
	for _, m := range n.messages {
		s.Logs = append(s.Logs, struct {
			Logger, Level string
			Data          any
		}{m.Logger, string(m.Level), m.Data})
	}
	return s
}
