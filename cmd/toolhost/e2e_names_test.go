package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolhost/toolhost/internal/testkit/testwasm"
	"github.com/toolhost/toolhost/transport"
)

// namesPlugins is a plugins folder with named files: text.wasm and
// math.wasm (Go guests), echo.wasm (wat.echo) and, when clash is set,
// clash.wasm (wat_echo, whose wire name is wat.echo's).
func namesPlugins(t *testing.T, clash bool) string {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{
		"text.wasm": testwasm.Go(t, "./tools-src/text"),
		"math.wasm": testwasm.Go(t, "./tools-src/mathtools"),
		"echo.wasm": testwasm.WAT(t, "host/testdata/wat/echo.wat"),
	}
	if clash {
		files["clash.wasm"] = testwasm.WAT(t, "host/testdata/wat/wireclash.wat")
	}
	for name, src := range files {
		b, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// listTools lists over the SDK client: wire name -> tool.
func listTools(t *testing.T, cs *mcp.ClientSession) map[string]*mcp.Tool {
	t.Helper()
	out := map[string]*mcp.Tool{}
	for tl, err := range cs.Tools(context.Background(), nil) {
		if err != nil {
			t.Fatal(err)
		}
		out[tl.Name] = tl
	}
	return out
}

// The default: client-safe names on the wire, the manifest name in
// _meta, either name callable, with the operator's views from the config.
func TestE2EWireNamesAndViews(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "views.toml")
	if err := os.WriteFile(cfg, []byte(`
[tools."text.case"]
expose = false

[tools."math.eval"]
name = "calc"
description = "Evaluates arithmetic (the operator's words)."

[modules."echo.wasm"]
prefix = "w_"

[modules."gone.wasm"]
prefix = "g_"
`), 0o644); err != nil {
		t.Fatal(err)
	}
	srv := startServer(t, namesPlugins(t, true), "--config", cfg)
	cs := srv.client(t)

	tools := listTools(t, cs)
	for wire, manifest := range map[string]string{
		"text_count": "text.count", "calc": "math.eval", "math_stats": "math.stats",
		"w_wat_echo": "wat.echo", "wat_echo": "wat_echo", "toolhost_plan": "toolhost.plan",
	} {
		tl, ok := tools[wire]
		if !ok {
			t.Errorf("%s (%s) not listed", wire, manifest)
			continue
		}
		if got := tl.Meta[transport.MetaToolName]; got != manifest {
			t.Errorf("%s: _meta[%q] = %v, want %q", wire, transport.MetaToolName, got, manifest)
		}
	}
	for _, gone := range []string{"text_case", "text.case", "math_eval", "math.eval", "wat.echo", "text.count"} {
		if _, ok := tools[gone]; ok {
			t.Errorf("%s is listed", gone)
		}
	}
	if d := tools["calc"].Description; d != "Evaluates arithmetic (the operator's words)." {
		t.Errorf("calc description %q", d)
	}

	for _, c := range []struct {
		name string
		args map[string]any
		want string // a piece of the result, or the error kind
	}{
		{"text_count", map[string]any{"text": "a b c"}, `"words":3`},
		{"text.count", map[string]any{"text": "a b c"}, `"words":3`},
		{"calc", map[string]any{"expr": "6*7"}, "42"},
		{"math.eval", map[string]any{"expr": "6*7"}, "42"},
		{"math_eval", map[string]any{"expr": "1"}, "not_found"},
		{"text_case", map[string]any{"text": "a", "to": "upper"}, "not_found"},
		{"text.case", map[string]any{"text": "a", "to": "upper"}, "not_found"},
		{"w_wat_echo", map[string]any{"x": 1}, `{"x":1}`},
	} {
		res := callTool(t, cs, c.name, c.args, nil)
		got := textOf(res)
		if res.IsError {
			got = string(envelope(t, res).Kind)
		}
		if !strings.Contains(got, c.want) {
			t.Errorf("call %s = %s, want %s", c.name, got, c.want)
		}
	}
	if log := srv.stderr.String(); !strings.Contains(log, `"msg":"config gives a prefix to a module the plugins folder does not have","module":"gone.wasm"`) ||
		strings.Contains(log, `does not have","module":"echo.wasm"`) {
		t.Errorf("serve does not warn about the prefix of gone.wasm alone:\n%s", log)
	}
	// The audit log keeps manifest names.
	if log := srv.stderr.String(); !strings.Contains(log, `"tool":"math.eval"`) || strings.Contains(log, `"tool":"calc"`) {
		t.Errorf("audit log does not name math.eval by its manifest name")
	}

	// The CLI: list shows both names; call takes either.
	out, errOut, code := srv.cli(t, "list")
	if code != 0 || !strings.Contains(out, "NAME") || !strings.Contains(out, "MANIFEST NAME") {
		t.Fatalf("toolhost list: %d %s %s", code, out, errOut)
	}
	for _, row := range [][]string{{"text_count", "text.count"}, {"calc", "math.eval"}, {"toolhost_plan", "toolhost.plan"}} {
		found := false
		for line := range strings.Lines(out) {
			if f := strings.Fields(line); len(f) > 1 && f[0] == row[0] && f[1] == row[1] {
				found = true
			}
		}
		if !found {
			t.Errorf("toolhost list has no row %v:\n%s", row, out)
		}
	}
	out, _, _ = srv.cli(t, "list", "--json")
	var rows []listedTool
	if err := json.Unmarshal([]byte(out), &rows); err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		if r.Name == "calc" && r.Manifest != "math.eval" {
			t.Errorf("list --json: %+v", r)
		}
	}
	for _, name := range []string{"text_count", "text.count"} {
		out, errOut, code := srv.cli(t, "call", name, `{"text":"a b"}`)
		if code != 0 || !strings.Contains(out, `"words":2`) {
			t.Errorf("toolhost call %s: %d %s %s", name, code, out, errOut)
		}
	}

	// Plan steps in toolhost.plan take either name, and not hidden tools.
	for _, step := range []struct {
		tool   string
		args   map[string]any
		status string
	}{
		{"calc", map[string]any{"expr": "1+1"}, "completed"},
		{"math.eval", map[string]any{"expr": "1+1"}, "completed"},
		{"text.case", map[string]any{"text": "a", "to": "upper"}, "failed"},
	} {
		res := callTool(t, cs, "toolhost_plan", map[string]any{"goal": "g",
			"steps": []map[string]any{{"id": 1, "tool_name": step.tool, "args": step.args}}}, nil)
		b, _ := json.Marshal(res.StructuredContent)
		var sr struct {
			Status string
			Error  struct{ Kind string }
		}
		_ = json.Unmarshal(b, &sr)
		if sr.Status != step.status || step.status == "failed" && sr.Error.Kind != "not_found" {
			t.Errorf("plan step %s: %s, want %s", step.tool, b, step.status)
		}
	}
}

// --tool-names=exact lists manifest names; wire-name clashes of the safe
// form are no clashes there.
func TestE2EExactToolNames(t *testing.T) {
	srv := startServer(t, namesPlugins(t, true), "--tool-names=exact")
	cs := srv.client(t)
	tools := listTools(t, cs)
	for _, want := range []string{"text.count", "math.eval", "wat.echo", "wat_echo", "toolhost.plan"} {
		if _, ok := tools[want]; !ok {
			t.Errorf("%s not listed under --tool-names=exact", want)
		}
	}
	if _, ok := tools["text_count"]; ok {
		t.Error("text_count listed under --tool-names=exact")
	}
	if tl := tools["text.count"]; tl != nil && tl.Meta[transport.MetaToolName] != "text.count" {
		t.Errorf("text.count _meta %v", tl.Meta)
	}
	res := callTool(t, cs, "text.count", map[string]any{"text": "x"}, nil)
	if res.IsError {
		t.Errorf("text.count: %+v", res.Content)
	}
	_, errOut, code := runBinary(t, nil, "serve", "--tool-names=dotted", "--plugins", t.TempDir())
	if code == 0 || !strings.Contains(errOut, `--tool-names must be "safe"`) {
		t.Errorf("serve --tool-names=dotted: %d %s", code, errOut)
	}
}

// Two modules whose tools map to one wire name: serve refuses the later
// file, naming both, and serves the rest.
func TestE2EWireNameClashRefused(t *testing.T) {
	dir := namesPlugins(t, true)
	srv := startServer(t, dir)
	log := srv.stderr.String()
	want := "skip " + filepath.Join(dir, "echo.wasm") + `: tools "wat_echo" and "wat.echo" would both be listed as "wat_echo"`
	if !strings.Contains(log, want) || !strings.Contains(log, filepath.Join(dir, "clash.wasm")) {
		t.Errorf("serve's log does not refuse echo.wasm naming clash.wasm:\nwant %s\n%s", want, log)
	}
	tools := listTools(t, srv.client(t))
	if tl := tools["wat_echo"]; tl == nil || tl.Meta[transport.MetaToolName] != "wat_echo" {
		t.Errorf("wat_echo of clash.wasm (first in file order) should serve: %v", tl)
	}
}

// A plan file may name tools by wire or manifest name, run in process or
// through a server.
func TestPlanRunEitherName(t *testing.T) {
	plugins := namesPlugins(t, false)
	file := writeFile(t, "plan.json", `{"goal": "count, then compute", "steps": [
		{"id": 1, "tool_name": "text_count", "args": {"text": "one two three"}},
		{"id": 2, "tool_name": "text.count", "args": {"text": "four five"}},
		{"id": 3, "tool_name": "math_eval", "args": {"expr": "2*3"}}]}`)
	check := func(t *testing.T, stdout, stderr string, code int) {
		t.Helper()
		if code != 0 {
			t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
		}
		res := decodeResult(t, stdout)
		if res.Status != "completed" || len(res.History) != 3 {
			t.Fatalf("%s (%s): %s", res.Status, res.Reason, res.Message)
		}
		if got := compact(res.History[2].Result); got != `{"value":6}` {
			t.Errorf("math_eval result %s", got)
		}
	}
	t.Run("in process", func(t *testing.T) {
		stdout, stderr, code := runCLI(t, append(append([]string{"plan", "run", "--plugins", plugins}, cacheFlag...), file)...)
		check(t, stdout, stderr, code)
	})
	t.Run("through a server", func(t *testing.T) {
		srv := startServer(t, plugins)
		stdout, stderr, code := runCLI(t, "plan", "run", "--server", srv.url, file)
		check(t, stdout, stderr, code)
	})
}
