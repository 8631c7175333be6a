package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolhost/toolhost/internal/testkit/testwasm"
	"github.com/toolhost/toolhost/plan"
	"github.com/toolhost/toolhost/transport"
)

// examplePlugins is a plugins folder with the text, math and JSON example
// tools but not the hash tools, so the rule planner has to route around
// hash.sha256.
func examplePlugins(t *testing.T) string {
	t.Helper()
	return testwasm.Dir(t,
		testwasm.Go(t, "./tools-src/text"),
		testwasm.Go(t, "./tools-src/mathtools"),
		testwasm.Go(t, "./tools-src/jsontools"),
	)
}

// runCLI runs the toolhost binary and returns stdout, stderr and the exit
// code.
func runCLI(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	return runBinary(t, []string{"NO_COLOR=1"}, args...)
}

func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func decodeResult(t *testing.T, stdout string) plan.SessionResult {
	t.Helper()
	var res plan.SessionResult
	if err := json.Unmarshal([]byte(stdout), &res); err != nil {
		t.Fatalf("stdout is not a SessionResult: %v\n%s", err, stdout)
	}
	return res
}

// compact is a JSON document without its indentation.
func compact(raw json.RawMessage) string {
	var b bytes.Buffer
	_ = json.Compact(&b, raw)
	return b.String()
}

// cacheFlag is --cache-dir testCache (set by TestMain).
var cacheFlag []string

// TestPlanRunE2E runs plan files against the example tools through the
// CLI, in process.
func TestPlanRunE2E(t *testing.T) {
	plugins := examplePlugins(t)
	goal := writeFile(t, "goal.json", `{"goal": "Plan execute replan", "session_id": "e2e"}`)

	t.Run("rule planner routes around a missing tool", func(t *testing.T) {
		events := filepath.Join(t.TempDir(), "events.jsonl")
		args := append([]string{"plan", "run", "--plugins", plugins, "--planner", "rules", "--events", events}, cacheFlag...)
		stdout, stderr, code := runCLI(t, append(args, goal)...)
		if code != 0 {
			t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
		}
		res := decodeResult(t, stdout)
		if res.Status != plan.StatusCompleted || res.Replans != 1 || res.StepsExecuted != 5 || res.SessionID != "e2e" {
			t.Fatalf("%s (%s), %d replans, %d steps: %s", res.Status, res.Reason, res.Replans, res.StepsExecuted, res.Message)
		}
		last := res.History[len(res.History)-1]
		if last.ToolName != "math.eval" || compact(last.Result) != `{"value":3}` {
			t.Errorf("words per line: %+v", last)
		}
		if res.History[3].ReusedFrom != 1 {
			t.Errorf("text.count was not reused after the replan: %+v", res.History[3])
		}
		for _, want := range []string{"hash.sha256 failed: not_found", "revision 2 (replan 1 of 5)", "- ~~4 math.eval~~", "+ 5 text.count", "reused step 1's result"} {
			if !strings.Contains(stderr, want) {
				t.Errorf("trace lacks %q:\n%s", want, stderr)
			}
		}
		f, err := os.Open(events)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		evs, err := plan.ReadJSONL(f)
		if err != nil {
			t.Fatal(err)
		}
		a, _ := json.Marshal(plan.Fold(evs))
		b, _ := json.Marshal(res)
		if !bytes.Equal(a, b) {
			t.Errorf("the --events log does not fold to the printed result")
		}
	})

	t.Run("static plan with references, in parallel", func(t *testing.T) {
		file := writeFile(t, "plan.json", `{"goal": "count and measure", "max_parallel": 2, "steps": [
			{"id": 1, "tool_name": "text.count", "args": {"text": "one two three\nfour"}, "expected_outcome": "counts"},
			{"id": 2, "tool_name": "json.get", "args": {"doc": {"a": [10, 20]}, "pointer": "/a/1"}},
			{"id": 3, "tool_name": "math.eval", "args": {"expr": "w * x", "vars": {"w": {"$ref": "/steps/1/result/words"}, "x": {"$ref": "/steps/2/result/value"}}}}
		]}`)
		stdout, stderr, code := runCLI(t, append(append([]string{"plan", "run", "--plugins", plugins}, cacheFlag...), file)...)
		res := decodeResult(t, stdout)
		if code != 0 || res.Limits.MaxParallel != 2 {
			t.Fatalf("exit %d, %+v\n%s", code, res, stderr)
		}
		if h := res.History[2]; h.ID != 3 || compact(h.Args) != `{"expr":"w * x","vars":{"w":4,"x":20}}` || compact(h.Result) != `{"value":80}` {
			t.Errorf("step 3: %s -> %s", h.Args, h.Result)
		}
	})

	t.Run("a failed session exits 1", func(t *testing.T) {
		file := writeFile(t, "plan.json", `{"goal": "bad", "steps": [{"id": 1, "tool_name": "math.eval", "args": {"expr": "1/0"}}]}`)
		stdout, _, code := runCLI(t, append(append([]string{"plan", "run", "--plugins", plugins}, cacheFlag...), file)...)
		res := decodeResult(t, stdout)
		if code != 1 || res.Reason != plan.ReasonNoPlan || res.Error == nil || res.Error.Kind != "schema" {
			t.Fatalf("exit %d: %s (%s) %v", code, res.Status, res.Reason, res.Error)
		}
	})

	t.Run("the operator's config applies to in-process runs", func(t *testing.T) {
		// An 8-byte output cap is less than math.eval's response: the
		// step fails (internal), the static planner gives up, the run
		// exits 1. (A 4 MiB memory cap, the lowest the config takes, no
		// longer stops a Go guest: one built with the SDK starts in
		// 3.4 MiB since the SDK links the standard library only.)
		conf := writeFile(t, "toolhost.toml", "[tools.\"math.eval\"]\noutput = \"8\"\n")
		file := writeFile(t, "plan.json", `{"goal": "g", "steps": [{"id": 1, "tool_name": "math.eval", "args": {"expr": "1+1"}}]}`)
		stdout, stderr, code := runCLI(t, append(append([]string{"plan", "run", "--plugins", plugins, "--config", conf}, cacheFlag...), file)...)
		res := decodeResult(t, stdout)
		if code != 1 || res.Error == nil || res.Error.Kind != "internal" || !strings.Contains(res.Error.Message, "over the 8-byte output cap") {
			t.Fatalf("exit %d: %s (%s) %v\n%s", code, res.Status, res.Reason, res.Error, stderr)
		}
		bad := writeFile(t, "bad.toml", "[tools.\"math.eval\"]\ntimout = \"1s\"\n")
		_, stderr, code = runCLI(t, "plan", "run", "--plugins", plugins, "--config", bad, file)
		if code != 2 || !strings.Contains(stderr, "bad.toml:2") {
			t.Fatalf("exit %d, stderr %q; want the config refused with its line", code, stderr)
		}
	})

	t.Run("budget flags override the file", func(t *testing.T) {
		file := writeFile(t, "plan.json", `{"goal": "g", "max_steps": 10, "steps": [
			{"id": 1, "tool_name": "text.count", "args": {"text": "a"}}, {"id": 2, "tool_name": "text.count", "args": {"text": "b"}}]}`)
		stdout, _, code := runCLI(t, append(append([]string{"plan", "run", "--plugins", plugins, "--max-steps", "1", "--max-replans", "0"}, cacheFlag...), file)...)
		res := decodeResult(t, stdout)
		if code != 1 || res.Reason != plan.ReasonStepBudget || res.Limits.MaxSteps != 1 || res.Limits.MaxReplans != 0 {
			t.Fatalf("exit %d: %s, limits %+v", code, res.Reason, res.Limits)
		}
	})

	t.Run("WebAssembly planner", func(t *testing.T) {
		planner := testwasm.Go(t, "./host/testdata/planner")
		stdout, stderr, code := runCLI(t, append(append([]string{"plan", "run", "--plugins", plugins, "--planner", planner}, cacheFlag...), goal)...)
		res := decodeResult(t, stdout)
		if code != 0 || len(res.History) != 2 || compact(res.History[1].Result) != `{"value":6}` {
			t.Fatalf("exit %d: %+v\n%s", code, res.History, stderr)
		}
	})
}

// TestPlanRunServer runs a plan through a running server: each step is a
// tools/call carrying the step's idempotency key.
func TestPlanRunServer(t *testing.T) {
	srv := startServer(t, examplePlugins(t))
	file := writeFile(t, "plan.json", `{"goal": "remote", "session_id": "remote-1", "steps": [
		{"id": 1, "tool_name": "text.count", "args": {"text": "a b"}},
		{"id": 2, "tool_name": "text.count", "args": {"text": "a b"}},
		{"id": 3, "tool_name": "nope.missing"}]}`)
	stdout, stderr, code := runCLI(t, "plan", "run", "--server", srv.url, file)
	res := decodeResult(t, stdout)
	if code != 1 || res.StepsExecuted != 2 || res.History[1].ReusedFrom != 1 || res.History[2].Error == nil ||
		res.History[2].Error.Kind != "not_found" {
		t.Fatalf("exit %d: %+v\n%s", code, res.History, stderr)
	}
	if !strings.Contains(srv.stderr.String(), `remote-1:1:text.count:`) {
		t.Errorf("the server's audit log does not show the step's idempotency key")
	}
}

func TestPlanCLIErrors(t *testing.T) {
	tests := []struct {
		name string
		args []string
		file string
		want string
	}{
		{"invalid plan", nil, `{"goal":"g","steps":[{"id":1,"tool_name":"t","args":{"x":{"$ref":"/steps/1/result"}}}]}`, "refers to the step itself"},
		{"unknown field", nil, `{"goal":"g","step":[]}`, `unknown field "step"`},
		{"bad planner", []string{"--planner", "llm"}, `{"goal":"g"}`, "--planner must be"},
		{"bad max-steps", []string{"--max-steps", "0"}, `{"goal":"g"}`, "--max-steps must be between"},
		{"bad max-parallel", []string{"--max-parallel", "65"}, `{"goal":"g"}`, "--max-parallel must be between"},
		{"bad session id", []string{"--session-id", "a:b"}, `{"goal":"g"}`, "--session-id must match"},
		{"missing planner module", []string{"--planner", "/nonexistent/p.wasm"}, `{"goal":"g"}`, "cannot read"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			file := writeFile(t, "plan.json", tt.file)
			var stdout, stderr bytes.Buffer
			args := append(append([]string{"plan", "run", "--plugins", t.TempDir()}, tt.args...), file)
			code := doMain(args, strings.NewReader(""), &stdout, &stderr)
			if code != 2 || !strings.Contains(stderr.String(), tt.want) || stdout.Len() != 0 {
				t.Fatalf("exit %d, stdout %q, stderr %q; want exit 2 saying %q", code, stdout.String(), stderr.String(), tt.want)
			}
		})
	}
}

func TestPlanSchema(t *testing.T) {
	for _, tt := range []struct {
		args  []string
		title string
	}{
		{[]string{"plan", "schema"}, "toolhost plan file"},
		{[]string{"plan", "schema", "--result"}, "toolhost plan session result"},
	} {
		var stdout, stderr bytes.Buffer
		if code := doMain(tt.args, strings.NewReader(""), &stdout, &stderr); code != 0 {
			t.Fatalf("%v: exit %d: %s", tt.args, code, stderr.String())
		}
		var s struct {
			Schema string                     `json:"$schema"`
			Title  string                     `json:"title"`
			Defs   map[string]json.RawMessage `json:"$defs"`
		}
		if err := json.Unmarshal(stdout.Bytes(), &s); err != nil || s.Title != tt.title || s.Defs["Step"] == nil ||
			!strings.Contains(s.Schema, "2020-12") {
			t.Errorf("%v: %v %+v", tt.args, err, s)
		}
	}
}

// serve --planners offers the operator's planner modules to toolhost.plan
// callers by file name.
func TestServePlannersFolder(t *testing.T) {
	planners := testwasm.Dir(t, testwasm.Go(t, "./host/testdata/planner"))
	name := strings.TrimSuffix(filepath.Base(testwasm.Go(t, "./host/testdata/planner")), ".wasm")
	srv := startServer(t, examplePlugins(t), "--planners", planners)
	cs := srv.client(t)
	tools, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, tl := range tools.Tools {
		if tl.Name == transport.PlanWireName {
			found = true
			b, _ := json.Marshal(tl.InputSchema)
			if !strings.Contains(string(b), `"`+name+`"`) {
				t.Fatalf("toolhost.plan's planner enum does not offer %s: %s", name, b)
			}
		}
	}
	if !found {
		t.Fatalf("%s is not listed", transport.PlanWireName)
	}
	res := callTool(t, cs, transport.PlanToolName, map[string]any{"goal": "one two three", "planner": name}, nil)
	var session plan.SessionResult
	b, _ := json.Marshal(res.StructuredContent)
	if err := json.Unmarshal(b, &session); err != nil || res.IsError || session.Status != plan.StatusCompleted || len(session.History) != 2 {
		t.Fatalf("plan with the %s planner: isError=%v %s (%v)", name, res.IsError, b, err)
	}
	if de := envelope(t, callTool(t, cs, transport.PlanToolName, map[string]any{"goal": "g", "planner": "nope"}, nil)); de.Kind != "schema" {
		t.Fatalf("unknown planner: %+v", de)
	}
}
