package main

import (
	"bufio"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/toolhost/toolhost/internal/testkit/testwasm"
)

// tsDir holds the TypeScript SDK client (conformance/ts; `make test`
// installs its pinned packages with npm ci).
func tsDir(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(testwasm.Root(t), "conformance", "ts")
	need := func(what string) {
		if os.Getenv("CI") != "" {
			t.Fatalf("%s: CI must run the TypeScript client (.ci/run installs Node.js; make test runs npm ci)", what)
		}
		t.Skipf("%s: run `make test`, which installs the TypeScript MCP SDK with npm ci", what)
	}
	if _, err := exec.LookPath("node"); err != nil {
		need("node not found")
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "@modelcontextprotocol", "sdk")); err != nil {
		need("conformance/ts/node_modules is missing")
	}
	return dir
}

// conformance is what both SDK clients do against a server (client.mjs
// and runGoClient read the same fields).
type conformance struct {
	Calls      []tsCall
	Cancels    []tsCall
	ListChange bool
	Plan       *struct {
		Args map[string]any `json:"args"`
	}
	// Progress is a call of a tool that reports progress and logs (see
	// checkProgressStep).
	Progress *tsCall
}

// conformanceScenario: every example tool, then an unknown tool and bad
// arguments (isError results), a plain and a keyed call cancelled while
// their guest runs, a module added (list_changed), a plan with progress.
func conformanceScenario(transport string) conformance {
	sc := conformance{
		Calls: append(append([]tsCall{}, exampleCalls...),
			tsCall{Tool: "no.such.tool", Args: json.RawMessage(`{}`)},
			tsCall{Tool: "text.count", Args: json.RawMessage(`{}`)}),
		Cancels: []tsCall{
			{Tool: "sleep", Args: json.RawMessage(`{"ms":25000}`)},
			{Tool: "sleep", Args: json.RawMessage(`{"ms":25000}`), Meta: map[string]any{"toolhost/idempotency_key": "cancel-" + transport}},
		},
		ListChange: true,
	}
	sc.Progress = &tsCall{Tool: "math.primes", Args: json.RawMessage(`{"below":1000000}`)}
	sc.Plan = &struct {
		Args map[string]any `json:"args"`
	}{Args: map[string]any{"goal": "Plan execute replan", "planner": "rules"}}
	return sc
}

// exampleCalls are one call of every example tool, by manifest name.
var exampleCalls = []tsCall{
	{Tool: "text.count", Args: json.RawMessage(`{"text":"a b c"}`)},
	{Tool: "text.find", Args: json.RawMessage(`{"text":"abc abd","pattern":"ab."}`)},
	{Tool: "text.case", Args: json.RawMessage(`{"text":"Hello World","to":"snake"}`)},
	{Tool: "text.slug", Args: json.RawMessage(`{"text":"Hello, World!"}`)},
	{Tool: "json.get", Args: json.RawMessage(`{"doc":{"a":[1,2]},"pointer":"/a/1"}`)},
	{Tool: "json.merge", Args: json.RawMessage(`{"doc":{"a":1},"patch":{"b":2}}`)},
	{Tool: "json.select", Args: json.RawMessage(`{"doc":{"items":[{"name":"x"}]},"path":".items[].name"}`)},
	{Tool: "math.eval", Args: json.RawMessage(`{"expr":"1+2*x","vars":{"x":3}}`)},
	{Tool: "math.stats", Args: json.RawMessage(`{"values":[1,2,3]}`)},
	{Tool: "hash.sha256", Args: json.RawMessage(`{"text":"abc"}`)},
	{Tool: "hash.hmac_sha256", Args: json.RawMessage(`{"key":"k","text":"abc"}`)},
	{Tool: "encode.base64", Args: json.RawMessage(`{"text":"hi"}`)},
	{Tool: "decode.base64", Args: json.RawMessage(`{"data":"aGk="}`)},
	{Tool: "uuid.v4", Args: json.RawMessage(`{"count":2}`)},
	{Tool: "time.now", Args: json.RawMessage(`{"zone":"Europe/Paris"}`)},
	{Tool: "time.convert", Args: json.RawMessage(`{"time":"2026-03-29T02:30","from_zone":"Europe/Paris","to_zone":"UTC"}`)},
	{Tool: "time.between", Args: json.RawMessage(`{"start":"2026-01-01T00:00:00Z","end":"2026-01-02T00:00:00Z"}`)},
}

type tsCall struct {
	Tool string          `json:"tool"`
	Args json.RawMessage `json:"args,omitempty"`
	Meta map[string]any  `json:"meta,omitempty"`
}

// tsStep is one line the client prints.
type tsStep struct {
	Step     string          `json:"step"`
	Tool     string          `json:"tool"`
	IsError  bool            `json:"isError"`
	Text     string          `json:"text"`
	Error    json.RawMessage `json:"error"`
	Thrown   *struct{ Name, Message string }
	Tools    json.RawMessage `json:"tools"`
	Progress int             `json:"progress"`
	Result   json.RawMessage `json:"result"`
	// The progress step: the result, the last progress notification,
	// whether each grew, and the log messages.
	Structured json.RawMessage `json:"structured"`
	Last       *struct {
		Progress, Total float64
		Message         string
	} `json:"last"`
	Increasing bool `json:"increasing"`
	Logs       []struct {
		Logger, Level string
		Data          any
	} `json:"logs"`
}

// TestTypeScriptClient drives `toolhost serve` with the official
// TypeScript SDK client over Streamable HTTP and over stdio: the list
// passes the SDK's own validation, every example tool answers, failures
// are isError results carrying the envelope, a cancelled call (plain and
// keyed) is stopped and audited as cancelled, a module dropped into the
// folder reaches the client as list_changed, and a plan streams progress.
func TestTypeScriptClient(t *testing.T) {
	dir := tsDir(t)
	for _, transport := range []string{"http", "stdio"} {
		t.Run(transport, func(t *testing.T) {
			plugins := conformancePlugins(t)
			sc := conformanceScenario(transport)
			scenario := map[string]any{"calls": sc.Calls, "cancels": sc.Cancels, "listChange": sc.ListChange,
				"plan": sc.Plan, "progress": sc.Progress}
			logs := &syncBuffer{}
			if transport == "http" {
				srv := startServer(t, plugins)
				scenario["transport"], scenario["url"] = "http", srv.url
				logs = srv.stderr
			} else {
				scenario["transport"], scenario["command"] = "stdio", buildCLI(t)
				scenario["args"] = []string{"serve", "--stdio", "--plugins", plugins,
					"--cache-dir", testCache}
			}
			steps := runTSClient(t, dir, scenario, logs, plugins)
			checkTSSteps(t, steps, logs)
		})
	}
}

// runTSClient runs the client and answers its await-* steps: an abort
// once the server has started the call's attempt (so the cancellation
// reaches a running guest), a module added to the folder on await-change.
func runTSClient(t *testing.T, dir string, scenario map[string]any, logs *syncBuffer, plugins string) []tsStep {
	t.Helper()
	spec, _ := json.Marshal(scenario)
	cmd := exec.Command("node", "client.mjs", string(spec))
	cmd.Dir = dir
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if scenario["transport"] == "stdio" {
		cmd.Stderr = logs // the server's log comes through the client
	} else {
		cmd.Stderr = os.Stderr
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	var steps []tsStep
	sc := bufio.NewScanner(stdout)
	sc.Buffer(make([]byte, 1<<20), 4<<20)
	attempts := 0
	for sc.Scan() {
		var s tsStep
		if err := json.Unmarshal(sc.Bytes(), &s); err != nil {
			t.Fatalf("client printed %q: %v", sc.Text(), err)
		}
		t.Logf("ts: %s", strings.TrimSpace(sc.Text()))
		switch s.Step {
		case "await-abort":
			attempts++
			waitForLog(t, logs, `"msg":"dispatch.attempt"`, `"tool":"`+s.Tool+`"`, attempts)
			io.WriteString(stdin, "abort\n")
		case "await-change":
			addEcho(t, plugins)
			io.WriteString(stdin, "changed\n")
		}
		steps = append(steps, s)
		if s.Step == "done" || s.Step == "fatal" {
			break
		}
	}
	return steps
}

// waitForLog blocks until the log holds n lines containing both a and b,
// or fails after a generous bound (the server is a real process on a
// possibly loaded machine; nothing is asserted about how long it took).
func waitForLog(t *testing.T, logs *syncBuffer, a, b string, n int) {
	t.Helper()
	deadline := time.NewTimer(2 * time.Minute)
	defer deadline.Stop()
	for {
		next := logs.next() // before reading, so no write is missed
		count := 0
		for _, line := range strings.Split(logs.String(), "\n") {
			if strings.Contains(line, a) && strings.Contains(line, b) {
				count++
			}
		}
		if count >= n {
			return
		}
		select {
		case <-next:
		case <-deadline.C:
			t.Fatalf("no %d log lines with %s and %s:\n%s", n, a, b, logs.String())
		}
	}
}

var wireName = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

func checkTSSteps(t *testing.T, steps []tsStep, logs *syncBuffer) {
	t.Helper()
	byStep := map[string][]tsStep{}
	for _, s := range steps {
		byStep[s.Step] = append(byStep[s.Step], s)
	}
	if f := byStep["fatal"]; len(f) > 0 {
		t.Fatalf("the TypeScript client failed: %s", f[0].Error)
	}
	if len(byStep["done"]) != 1 {
		t.Fatalf("the client did not finish: %d steps", len(steps))
	}
	var listed []struct{ Name, Manifest string }
	if err := json.Unmarshal(byStep["list"][0].Tools, &listed); err != nil {
		t.Fatal(err)
	}
	manifest := map[string]bool{}
	for _, l := range listed {
		manifest[l.Manifest] = true
		if !wireName.MatchString(l.Name) {
			t.Errorf("listed name %q is refused by Claude Desktop and OpenAI (^[a-zA-Z0-9_-]{1,64}$)", l.Name)
		}
	}
	for _, c := range exampleCalls {
		if !manifest[c.Tool] {
			t.Errorf("%s is not listed", c.Tool)
		}
	}
	calls := byStep["call"]
	if len(calls) != len(exampleCalls)+2 {
		t.Fatalf("%d call steps, want %d", len(calls), len(exampleCalls)+2)
	}
	for _, c := range calls[:len(exampleCalls)] {
		if c.Thrown != nil || c.IsError {
			t.Errorf("%s: isError=%v thrown=%v text=%s", c.Tool, c.IsError, c.Thrown, c.Text)
		}
	}
	for i, want := range []string{"not_found", "schema"} {
		c := calls[len(exampleCalls)+i]
		var env struct{ Kind string }
		_ = json.Unmarshal(c.Error, &env)
		if c.Thrown != nil || !c.IsError || env.Kind != want {
			t.Errorf("%s: want an isError result with kind %s; got isError=%v thrown=%v envelope=%s", c.Tool, want, c.IsError, c.Thrown, c.Error)
		}
	}
	for _, c := range byStep["cancel"] {
		if c.Thrown == nil {
			t.Errorf("cancelled %s: the call returned %s instead of failing as aborted", c.Tool, c.Result)
		}
	}
	// Both cancelled sleeps are audited as cancelled (the keyed one too:
	// its only waiter left, so its execution was stopped).
	waitForLog(t, logs, `"msg":"call"`, `"outcome":"cancelled"`, 2)
	if lc := byStep["list_changed"]; len(lc) != 1 || !strings.Contains(string(lc[0].Tools), `"wat.echo"`) {
		t.Errorf("after a module was added: %v, want wat.echo listed", lc)
	}
	if p := byStep["plan"]; len(p) != 1 || p[0].IsError || p[0].Progress == 0 {
		t.Errorf("plan: %+v, want a result and progress notifications", p)
	}
	checkProgressStep(t, byStep["progress"])
	if a := byStep["alive"]; len(a) != 1 || a[0].IsError {
		t.Errorf("a last call failed: %+v", a)
	}
}

// checkProgressStep: math.primes (a Go SDK guest calling guest.Progress
// after each of its 20 segments and guest.Log once) reaches the client as
// notifications/progress on its request, growing, the last one always
// delivered (the host rate-limits the rest, so how many arrive depends on
// the machine's speed), and as a notifications/message from the tool.
func checkProgressStep(t *testing.T, steps []tsStep) {
	t.Helper()
	if len(steps) != 1 {
		t.Fatalf("%d progress steps, want 1", len(steps))
	}
	s := steps[0]
	if s.IsError || !sameJSONText(string(s.Structured), `{"count":78498,"largest":999983}`) {
		t.Errorf("math.primes: isError %v, result %s", s.IsError, s.Structured)
	}
	if s.Progress < 1 || s.Progress > 20 || !s.Increasing || s.Last == nil ||
		s.Last.Progress != 1e6 || s.Last.Total != 1e6 || s.Last.Message != "78498 primes below 1000000" {
		t.Errorf("math.primes progress: %d notifications, increasing %v, last %+v; want 1 to 20, growing, ending at 1000000 of 1000000",
			s.Progress, s.Increasing, s.Last)
	}
	found := false
	for _, l := range s.Logs {
		if d, _ := l.Data.(string); l.Level == "info" && strings.HasPrefix(d, "sieved 999998 numbers") {
			found = true
		}
	}
	if !found {
		t.Errorf("math.primes logged nothing the client heard: %+v", s.Logs)
	}
}

func sameJSONText(a, b string) bool {
	var x, y any
	if json.Unmarshal([]byte(a), &x) != nil || json.Unmarshal([]byte(b), &y) != nil {
		return false
	}
	xb, _ := json.Marshal(x)
	yb, _ := json.Marshal(y)
	return string(xb) == string(yb)
}
