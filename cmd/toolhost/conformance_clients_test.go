package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/toolhost/toolhost/internal/testkit/testwasm"
)

// clientsDir holds the third-party clients pinned in conformance/clients
// (`make test` installs them with npm ci): the TypeScript SDK v2 with
// ext-tasks, the AI SDK's MCP client and OpenAI's Agents SDK. As with
// tsDir, a missing node skips locally and fails under CI.
func clientsDir(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(testwasm.Root(t), "conformance", "clients")
	need := func(what string) {
		if os.Getenv("CI") != "" {
			t.Fatalf("%s: CI must run the third-party clients (.ci/run installs Node.js; make test runs npm ci)", what)
		}
		t.Skipf("%s: run `make test`, which installs conformance/clients with npm ci", what)
	}
	if _, err := exec.LookPath("node"); err != nil {
		need("node not found")
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "@modelcontextprotocol", "client")); err != nil {
		need("conformance/clients/node_modules is missing")
	}
	return dir
}

// exampleTools is a plugins folder with the Go example modules only.
func exampleTools(t *testing.T) string {
	t.Helper()
	return testwasm.Dir(t,
		testwasm.Go(t, "./tools-src/text"),
		testwasm.Go(t, "./tools-src/jsontools"),
		testwasm.Go(t, "./tools-src/mathtools"),
		testwasm.Go(t, "./tools-src/hashtools"),
		testwasm.Go(t, "./tools-src/time"),
	)
}

// runNode runs script in dir with one JSON argument and decodes the one
// JSON line it prints into out; a printed {"error": …} fails the test.
func runNode(t *testing.T, dir, script string, arg any, out any) {
	t.Helper()
	spec, _ := json.Marshal(arg)
	if s, ok := arg.(string); ok {
		spec = []byte(s)
	}
	cmd := exec.Command("node", script, string(spec))
	cmd.Dir = dir
	var stderr strings.Builder
	cmd.Stderr = &stderr
	b, err := cmd.Output()
	if err != nil {
		t.Fatalf("node %s: %v\nstdout: %s\nstderr: %s", script, err, b, lastLines(stderr.String(), 40))
	}
	var failed struct{ Error string }
	if json.Unmarshal(b, &failed) == nil && failed.Error != "" {
		t.Fatalf("node %s failed: %s\nstderr: %s", script, failed.Error, lastLines(stderr.String(), 40))
	}
	if err := json.Unmarshal(b, out); err != nil {
		t.Fatalf("node %s printed %q: %v", script, b, err)
	}
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// TestTypeScriptV2Client: the TypeScript SDK v2 at 2025-11-25 (initialize)
// and at 2026-07-28 (server/discover, pinned) lists and calls the tools,
// and its ext-tasks client runs a success and a tool failure as tasks. At
// 2026-07-28 ext-tasks refuses a tasks/get whose embedded result lacks
// resultType "complete" (issue 20).
func TestTypeScriptV2Client(t *testing.T) {
	dir := clientsDir(t)
	srv := startServer(t, exampleTools(t))
	for _, rev := range []string{"2025-11-25", "2026-07-28"} {
		t.Run(rev, func(t *testing.T) {
			var got struct {
				Era   string
				Tools []string
				Call  struct{ Words int }
				Tasks []struct {
					Name, Kind string
					IsError    bool
					Structured *struct{ Words int }
				}
			}
			runNode(t, dir, "ts2.mjs", map[string]string{"url": srv.url, "revision": rev}, &got)
			if want := map[bool]string{false: "legacy", true: "modern"}[rev >= "2026-07-28"]; got.Era != want {
				t.Errorf("era %q, want %q", got.Era, want)
			}
			for _, name := range []string{"text_count", "json_get", "math_eval", "hash_sha256", "time_now", "toolhost_plan"} {
				if !slices.Contains(got.Tools, name) {
					t.Errorf("%s not listed: %v", name, got.Tools)
				}
			}
			if got.Call.Words != 3 {
				t.Errorf("text_count: %+v", got.Call)
			}
			if len(got.Tasks) != 2 || got.Tasks[0].Kind != "completed" || got.Tasks[0].IsError ||
				got.Tasks[0].Structured == nil || got.Tasks[0].Structured.Words != 2 ||
				got.Tasks[1].Kind != "completed" || !got.Tasks[1].IsError {
				t.Errorf("tasks: %+v; want a completed success (2 words) and a completed isError result", got.Tasks)
			}
		})
	}
}

// TestAISDKClientSlowStart: the AI SDK's MCP client over stdio probes with
// server/discover and, unanswered after a second, sends initialize;
// slowstart.mjs holds the server's input until both are sent, so the
// server reads discover then initialize on one pipe, as on a slow start.
// The SDK's session once refused that initialize as a duplicate, with
// JSON-RPC code 0 (issue 20).
func TestAISDKClientSlowStart(t *testing.T) {
	dir := clientsDir(t)
	var got struct {
		Tools  []string
		Result struct {
			IsError           bool
			StructuredContent struct{ Words int }
		}
	}
	runNode(t, dir, "aisdk.mjs", map[string]any{
		"command": buildCLI(t),
		"args": []string{"serve", "--stdio", "--plugins", exampleTools(t),
			"--cache-dir", testCache},
		"tool": "text_count", "toolArgs": map[string]string{"text": "a b c"},
	}, &got)
	if !slices.Contains(got.Tools, "text_count") || got.Result.IsError || got.Result.StructuredContent.Words != 3 {
		t.Errorf("tools %v, result %+v; want text_count listed and 3 words", got.Tools, got.Result)
	}
}

// strictExempt are the tools whose input schemas use what OpenAI's strict
// mode cannot express, so the Agents SDK rightly sends them non-strict:
// oneOf (either of two inputs) and objects with open keys.
var strictExempt = map[string]string{
	"hash_sha256":      "oneOf: text or data_base64",
	"hash_hmac_sha256": "oneOf: key or key_base64, text or data_base64",
	"math_eval":        "vars is a map of variable names",
	"toolhost_plan":    "a step's args is any object",
}

// TestOpenAIAgentsStrict: OpenAI's Agents SDK converts every other tool
// to strict mode. It looks for the literal "additionalProperties": false;
// {"not": {}}, which toolhost once wrote, kept 18 of 20 tools out (issue
// 20).
func TestOpenAIAgentsStrict(t *testing.T) {
	dir := clientsDir(t)
	srv := startServer(t, exampleTools(t))
	var got struct {
		Tools []struct {
			Name       string
			Strict     bool
			Parameters json.RawMessage
		}
	}
	runNode(t, dir, "agents.mjs", srv.url, &got)
	if len(got.Tools) < 15 {
		t.Fatalf("%d tools converted, want every example tool", len(got.Tools))
	}
	for _, tl := range got.Tools {
		_, exempt := strictExempt[tl.Name]
		if tl.Strict == exempt {
			t.Errorf("%s: strict %v, want %v (%s); parameters %s", tl.Name, tl.Strict, !exempt, strictExempt[tl.Name], tl.Parameters)
		}
	}
}

// TestMCPGoClient: mark3labs/mcp-go's client (conformance/mcpgo, a module
// of its own so that mcp-go stays out of the server's go.mod) initializes,
// lists the tools and calls one; an unknown tool is an isError result with
// the not_found envelope, never a JSON-RPC error.
func TestMCPGoClient(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the mcp-go client module")
	}
	srv := startServer(t, exampleTools(t))
	cmd := exec.Command(filepath.Join(runtime.GOROOT(), "bin", "go"), "run", ".", srv.url)
	cmd.Dir = filepath.Join(testwasm.Root(t), "conformance", "mcpgo")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	b, err := cmd.Output()
	if err != nil {
		t.Fatalf("go run conformance/mcpgo: %v\n%s\n%s", err, b, lastLines(stderr.String(), 40))
	}
	var got struct {
		Protocol, Error string
		Tools           []string
		Call            struct {
			IsError           bool
			StructuredContent struct{ Words int }
		}
		Unknown struct {
			IsError bool
			Meta    map[string]json.RawMessage `json:"_meta"`
		}
	}
	if err := json.Unmarshal(b, &got); err != nil || got.Error != "" {
		t.Fatalf("mcp-go client: %s (%v)", b, err)
	}
	if got.Protocol == "" || !slices.Contains(got.Tools, "text_count") {
		t.Errorf("protocol %q, tools %v", got.Protocol, got.Tools)
	}
	if got.Call.IsError || got.Call.StructuredContent.Words != 3 {
		t.Errorf("text_count: %+v", got.Call)
	}
	if !got.Unknown.IsError || !strings.Contains(string(got.Unknown.Meta["toolhost/error"]), `"not_found"`) {
		t.Errorf("unknown tool: %+v, want an isError result with the not_found envelope", got.Unknown)
	}
}
