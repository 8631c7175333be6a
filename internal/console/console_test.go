package console_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/toolhost/toolhost/access"
	"github.com/toolhost/toolhost/breaker"
	"github.com/toolhost/toolhost/dispatcher"
	"github.com/toolhost/toolhost/events"
	"github.com/toolhost/toolhost/governor"
	"github.com/toolhost/toolhost/internal/console"
	"github.com/toolhost/toolhost/loader"
	"github.com/toolhost/toolhost/plan"
	"github.com/toolhost/toolhost/registry"
	"github.com/toolhost/toolhost/transport"
)

// The tokens of the fixture: alice may list echo and flaky; bob every
// tool; op every tool and is an operator.
const (
	aliceToken = "alice-token-0123456789"
	bobToken   = "bob-token-0123456789ab"
	opToken    = "op-token-0123456789abcd"
)

// fixture is a console over real pieces: a registry, a dispatcher with its
// breakers, a governor, an event bus, static tokens and an access policy.
type fixture struct {
	console *console.Console
	handler http.Handler
	d       *dispatcher.Dispatcher
	bus     *events.Bus
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	ok := registry.HandlerFunc(func(context.Context, json.RawMessage) (json.RawMessage, error) {
		return json.RawMessage(`{"ok":true}`), nil
	})
	fail := registry.HandlerFunc(func(context.Context, json.RawMessage) (json.RawMessage, error) {
		return nil, errors.New("upstream is down")
	})
	schema := json.RawMessage(`{"type":"object"}`)
	mod := registry.Module{Path: "plugins/kit.wasm", SHA256: strings.Repeat("ab", 32)}
	reg, err := registry.New([]*registry.Tool{
		{Name: "kit.echo", Title: "Echo", ReadOnly: true, Idempotent: true, InputSchema: schema, Timeout: time.Second, Module: mod, Handler: ok},
		{Name: "kit.flaky", InputSchema: schema, Timeout: time.Second, Module: mod, Handler: fail},
		{Name: "kit.secret", InputSchema: schema, Timeout: time.Second, Module: mod, Handler: ok},
		{Name: "kit.hidden", Hidden: true, InputSchema: schema, Timeout: time.Second, Module: mod, Handler: ok},
	})
	if err != nil {
		t.Fatal(err)
	}
	policy, err := access.New([]access.Rule{
		{Identities: []string{"alice"}, Tools: []string{"kit.echo", "kit.flaky"}, Action: access.Allow},
		{Identities: []string{"bob", "op"}, Tools: []string{"*"}, Action: access.Allow},
	})
	if err != nil {
		t.Fatal(err)
	}
	tokens, err := transport.ParseTokens("tokens", strings.NewReader("alice:"+aliceToken+"\nbob:"+bobToken+"\nop:"+opToken+"\n"))
	if err != nil {
		t.Fatal(err)
	}
	bus := events.NewBus(nil)
	gov, err := governor.New(governor.Config{Events: bus, Quotas: []governor.Quota{
		{Name: "upstream", Capacity: 100, Interval: time.Minute, Tools: map[string]int64{"kit.echo": 1, "kit.secret": 1}}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(gov.Close)
	d := dispatcher.New(reg, dispatcher.Config{Events: bus, Governor: gov,
		Breaker: breaker.Settings{Failures: 1, Cooldown: time.Minute, Jitter: -1}})
	files := []loader.FileState{
		{Path: "plugins/kit.wasm", State: loader.StateServing, SHA256: mod.SHA256, Compiled: true,
			Tools: []string{"kit.echo", "kit.flaky", "kit.secret", "kit.hidden"}},
		{Path: "plugins/broken.wasm", State: loader.StateRefused, SHA256: strings.Repeat("cd", 32), Reason: "not a WebAssembly module"},
	}
	c := console.New(console.Options{
		Sources: console.Sources{
			Files:    func() []loader.FileState { return append([]loader.FileState(nil), files...) },
			Tools:    func() *registry.Registry { return reg },
			Pools:    func() []console.Pool { return []console.Pool{{Tool: "kit.echo", Idle: 2, Busy: 1, Callers: 1}} },
			Breakers: d.Breakers,
			Tasks: func() []console.Task {
				started := time.Now().Add(-90 * time.Second)
				return []console.Task{
					{ID: "task-alice-0123456789", Caller: "alice", Tool: "kit.echo", Started: started, Note: "half <done>"},
					{ID: "task-alice-secret-tool", Caller: "alice", Tool: "kit.secret", Started: started},
					{ID: "task-bob-0123456789", Caller: "bob", Tool: "toolhost.plan", Started: started},
				}
			},
			Quotas: gov.Status,
			Events: bus,
		},
		Auth:     tokens.Require,
		Access:   policy,
		Operator: func(id string) bool { return id == "op" },
		Version:  "v-test",
	})
	t.Cleanup(c.Close)
	guard, _ := transport.ParseOrigins(nil)
	mux := http.NewServeMux()
	mux.Handle("/ui", c.Handler())
	mux.Handle("/ui/", c.Handler())
	return &fixture{console: c, handler: guard.Guard(mux), d: d, bus: bus}
}

func (f *fixture) call(t *testing.T, caller, tool string) {
	t.Helper()
	f.d.Do(context.Background(), dispatcher.Call{Tool: tool, Args: json.RawMessage(`{}`), Options: dispatcher.Options{Caller: caller}})
}

// get serves a GET of path with token (none when empty) and extra headers.
func (f *fixture) get(t *testing.T, path, token string, hdr ...string) (*http.Response, string) {
	t.Helper()
	req := httptest.NewRequest(http.MethodGet, "http://127.0.0.1:7000"+path, nil)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	rec := httptest.NewRecorder()
	f.handler.ServeHTTP(rec, req)
	body, _ := io.ReadAll(rec.Result().Body)
	return rec.Result(), string(body)
}

func TestWithoutTokenOnlyTheSignInPage(t *testing.T) {
	f := newFixture(t)
	resp, body := f.get(t, "/ui", "")
	if resp.StatusCode != http.StatusUnauthorized || !strings.Contains(body, `id="signin"`) || strings.Contains(body, "view-tools") {
		t.Fatalf("GET /ui without a token: %d, want 401 and the sign-in page without views:\n%s", resp.StatusCode, body)
	}
	for _, path := range []string{"/ui/view/all", "/ui/view/tools", "/ui/calls"} {
		if resp, body := f.get(t, path, ""); resp.StatusCode != http.StatusUnauthorized || strings.Contains(body, "kit.") {
			t.Errorf("GET %s without a token: %d %s, want 401 and no data", path, resp.StatusCode, body)
		}
	}
	if resp, _ := f.get(t, "/ui/view/tools", "not-a-known-token-at-all"); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("an unknown token: %d, want 401", resp.StatusCode)
	}
}

func TestStrictHeadersAndNoInlineScript(t *testing.T) {
	f := newFixture(t)
	for _, token := range []string{"", aliceToken} {
		resp, body := f.get(t, "/ui", token)
		csp := resp.Header.Get("Content-Security-Policy")
		if !strings.Contains(csp, "script-src 'self'") || !strings.Contains(csp, "default-src 'none'") || strings.Contains(csp, "unsafe-inline") {
			t.Errorf("CSP %q", csp)
		}
		if resp.Header.Get("X-Content-Type-Options") != "nosniff" || resp.Header.Get("Cache-Control") != "no-store" {
			t.Errorf("headers %v", resp.Header)
		}
		if regexp.MustCompile(`<script(\s[^>]*)?>[^<]`).MatchString(body) || strings.Contains(body, "style=") || strings.Contains(body, " on") && regexp.MustCompile(`\son[a-z]+=`).MatchString(body) {
			t.Errorf("page has inline script or style:\n%s", body)
		}
	}
	resp, body := f.get(t, "/ui/static/console.js", "")
	if resp.StatusCode != http.StatusOK || !strings.Contains(resp.Header.Get("Content-Type"), "javascript") || !strings.Contains(body, "sessionStorage") {
		t.Errorf("console.js: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	req := httptest.NewRequest(http.MethodPost, "http://127.0.0.1:7000/ui", nil)
	req.Header.Set("Authorization", "Bearer "+opToken)
	rec := httptest.NewRecorder()
	f.handler.ServeHTTP(rec, req)
	if rec.Code != http.StatusMethodNotAllowed {
		t.Errorf("POST /ui: %d, want 405", rec.Code)
	}
}

func TestForeignOriginRefused(t *testing.T) {
	f := newFixture(t)
	if resp, body := f.get(t, "/ui/view/tools", aliceToken, "Origin", "http://evil.example"); resp.StatusCode != http.StatusForbidden || strings.Contains(body, "kit.") {
		t.Errorf("a foreign origin: %d %s, want 403", resp.StatusCode, body)
	}
	if resp, _ := f.get(t, "/ui/view/tools", aliceToken, "Origin", "http://127.0.0.1:7000"); resp.StatusCode != http.StatusOK {
		t.Errorf("the page's own origin: %d, want 200", resp.StatusCode)
	}
}

func TestToolsViewShowsWhatTheCallerMayList(t *testing.T) {
	f := newFixture(t)
	// With JavaScript off the page itself carries every view when the
	// request has the token.
	resp, alice := f.get(t, "/ui", aliceToken)
	if resp.StatusCode != http.StatusOK || !strings.Contains(alice, `id="view-tools"`) || !strings.Contains(alice, "signed in as <b>alice</b>") {
		t.Fatalf("GET /ui with a token: %d\n%s", resp.StatusCode, alice)
	}
	for _, want := range []string{"plugins/kit.wasm", "serving", "abababababab", "kit.echo", "read-only, idempotent", "2 idle, 1 busy", "kit.flaky"} {
		if !strings.Contains(alice, want) {
			t.Errorf("alice's tools view lacks %q", want)
		}
	}
	for _, not := range []string{"kit.secret", "kit.hidden", "broken.wasm", "not a WebAssembly module"} {
		if strings.Contains(alice, not) {
			t.Errorf("alice's tools view shows %q", not)
		}
	}
	_, op := f.get(t, "/ui/view/tools", opToken)
	for _, want := range []string{"kit.secret", "plugins/broken.wasm", "refused", "not a WebAssembly module"} {
		if !strings.Contains(op, want) {
			t.Errorf("the operator's tools view lacks %q", want)
		}
	}
	if strings.Contains(op, "kit.hidden") {
		t.Error("a hidden tool is listed")
	}
}

func TestBreakersView(t *testing.T) {
	f := newFixture(t)
	f.call(t, "alice", "kit.flaky") // one failure opens it (Failures: 1)
	f.call(t, "bob", "kit.secret")
	_, alice := f.get(t, "/ui/view/breakers", aliceToken)
	if !regexp.MustCompile(`(?s)kit\.flaky</td><td>open</td><td>-</td><td>(59\.\d|1m0)`).MatchString(alice) {
		t.Errorf("alice's breakers view lacks kit.flaky open with about a minute left:\n%s", alice)
	}
	if strings.Contains(alice, "kit.secret") {
		t.Error("alice sees the breaker of a tool she may not list")
	}
	if _, bob := f.get(t, "/ui/view/breakers", bobToken); !strings.Contains(bob, "kit.secret</td><td>closed</td><td>0 of 1 calls (0%) in 30s; opens at 50% of 20 or more") {
		t.Errorf("bob's breakers view:\n%s", bob)
	}
}

func TestGovernorViewShowsOwnUseUnlessOperator(t *testing.T) {
	f := newFixture(t)
	f.call(t, "alice", "kit.echo")
	f.call(t, "bob", "kit.secret")
	f.call(t, "bob", "kit.secret")
	_, alice := f.get(t, "/ui/view/governor", aliceToken)
	if !strings.Contains(alice, "upstream") || !strings.Contains(alice, "3 / ") || !strings.Contains(alice, "from 14, until below 10") || !strings.Contains(alice, "alice: 1") || strings.Contains(alice, "bob") {
		t.Errorf("alice's governor view (want the quota, 3 granted, her own use only):\n%s", alice)
	}
	if _, op := f.get(t, "/ui/view/governor", opToken); !strings.Contains(op, "alice: 1") || !strings.Contains(op, "bob: 2") {
		t.Errorf("the operator's governor view lacks every agent:\n%s", op)
	}
}

func TestCallsViewFiltersByCallerToolAndQuery(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFixture(t)
		f.call(t, "alice", "kit.echo")
		f.call(t, "bob", "kit.echo")
		f.call(t, "bob", "kit.secret")
		f.call(t, "alice", "kit.flaky")
		synctest.Wait() // the console has recorded every result
		_, alice := f.get(t, "/ui/view/calls", aliceToken)
		if !strings.Contains(alice, "<td>kit.echo</td><td>alice</td><td>ok</td><td>1</td>") || !strings.Contains(alice, "kit.flaky</td><td>alice</td><td>internal") {
			t.Errorf("alice's calls view lacks her calls:\n%s", alice)
		}
		if strings.Contains(alice, "<td>bob</td>") || strings.Contains(alice, "kit.secret") {
			t.Errorf("alice's calls view shows bob's calls:\n%s", alice)
		}
		_, op := f.get(t, "/ui/view/calls?q=secret", opToken)
		if !strings.Contains(op, "kit.secret</td><td>bob") || strings.Contains(op, "kit.echo</td>") {
			t.Errorf("the operator's calls view filtered by q=secret:\n%s", op)
		}
	})
}

func TestLiveCallsStream(t *testing.T) {
	f := newFixture(t)
	srv := httptest.NewServer(f.handler)
	defer srv.Close()
	req, _ := http.NewRequest(http.MethodGet, srv.URL+"/ui/calls", nil)
	req.Header.Set("Authorization", "Bearer "+aliceToken)
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("/ui/calls: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	rd := bufio.NewReader(resp.Body)
	if line, _ := rd.ReadString('\n'); !strings.HasPrefix(line, ":") {
		t.Fatalf("first line %q, want the stream's comment", line)
	}
	f.call(t, "bob", "kit.echo")   // bob's: not alice's to see
	f.call(t, "alice", "kit.echo") // the first she sees
	for {
		line, err := rd.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		data, ok := strings.CutPrefix(strings.TrimSpace(line), "data: ")
		if !ok {
			continue
		}
		var row struct {
			Tool, Caller, Outcome string
			Attempts              int
		}
		if err := json.Unmarshal([]byte(data), &row); err != nil {
			t.Fatal(err)
		}
		if row.Tool != "kit.echo" || row.Caller != "alice" || row.Outcome != "ok" || row.Attempts != 1 {
			t.Fatalf("first live call %+v, want alice's kit.echo, ok, 1 attempt", row)
		}
		break
	}
	f.console.CloseStreams()
	if _, err := io.Copy(io.Discard, rd); err != nil {
		t.Fatalf("the stream did not end cleanly on CloseStreams: %v", err)
	}
}

// The chart counts the calls a caller may see over the last minute and
// draws the last ten: alice's own, every caller's for the operator.
func TestChartViewCountsWhatTheCallerSees(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFixture(t)
		f.call(t, "alice", "kit.echo")
		f.call(t, "alice", "kit.flaky")
		f.call(t, "bob", "kit.secret")
		synctest.Wait()
		summary := regexp.MustCompile(`<td>last minute</td><td>(\d+)</td><td>([\d.]+)</td><td>(\d+)</td><td>([^<]+)</td>`)
		for _, tc := range []struct{ token, calls, rate, failed string }{
			{aliceToken, "2", "0.03", "1"}, {opToken, "3", "0.05", "1"}, {bobToken, "1", "0.02", "0"},
		} {
			_, body := f.get(t, "/ui/view/chart", tc.token)
			m := summary.FindStringSubmatch(body)
			if m == nil || m[1] != tc.calls || m[2] != tc.rate || m[3] != tc.failed || m[4] == "-" {
				t.Errorf("chart for %s: summary %q, want %s calls, %s/s, %s failed, a p50:\n%s", tc.token[:3], m, tc.calls, tc.rate, tc.failed, body)
			}
			if strings.Count(body, "<svg") != 2 || !strings.Contains(body, `<polyline class="p99"`) {
				t.Errorf("chart for %s lacks its two plots:\n%s", tc.token[:3], body)
			}
		}
		time.Sleep(11 * time.Minute) // synctest's clock: the calls leave the chart
		if _, body := f.get(t, "/ui/view/chart", opToken); !summary.MatchString(body) || !strings.Contains(body, "<td>last minute</td><td>0</td>") || strings.Contains(body, `class="p99"`) {
			t.Errorf("chart eleven minutes on still holds the calls:\n%s", body)
		}
	})
}

// A plan session run by the executor over the fixture's dispatcher shows
// in the plans view with its revisions: the first plan's step fails, the
// replan replaces it. Alice sees her session; bob does not.
func TestPlansViewShowsSessionsAndRevisions(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFixture(t)
		planner := plan.PlannerFunc(func(_ context.Context, in plan.Input) ([]plan.Step, error) {
			tool := "kit.flaky"
			if in.LastError != nil {
				tool = "kit.echo"
			}
			return []plan.Step{{ID: in.NextID, ToolName: tool, Args: json.RawMessage(`{}`)}}, nil
		})
		res, err := plan.New(plan.Config{Dispatcher: f.d, Planner: planner, Bus: f.bus,
			Options: dispatcher.Options{Caller: "alice"}}).Run(context.Background(), plan.Session{ID: "s-1", Goal: "echo something"})
		if err != nil || res.Status != plan.StatusCompleted {
			t.Fatalf("session: %v %+v", err, res)
		}
		synctest.Wait()
		_, alice := f.get(t, "/ui/view/plans", aliceToken)
		for _, want := range []string{`data-session="s-1"`, "completed", "echo something",
			"<td>1</td><td>kit.flaky</td><td>first plan</td><td>-</td>",
			"<td>2</td><td>kit.echo</td><td>added 2; removed none; revised none</td><td>internal:",
			"steps 1 succeeded, 1 failed"} {
			if !strings.Contains(alice, want) {
				t.Errorf("alice's plans view lacks %q:\n%s", want, alice)
			}
		}
		if _, bob := f.get(t, "/ui/view/plans", bobToken); strings.Contains(bob, "s-1") {
			t.Errorf("bob sees alice's session:\n%s", bob)
		}
		if _, op := f.get(t, "/ui/view/plans", opToken); !strings.Contains(op, `data-session="s-1"`) {
			t.Errorf("the operator does not see alice's session:\n%s", op)
		}
	})
}

// The tasks view: a caller's own running tasks of tools it may list,
// every caller's for the operator, ids cut short and notes escaped.
func TestTasksViewShowsOwnTasks(t *testing.T) {
	f := newFixture(t)
	_, alice := f.get(t, "/ui/view/tasks", aliceToken)
	if !strings.Contains(alice, "<td>task-ali…</td><td>kit.echo</td><td>alice</td><td>1m30s</td><td>half &lt;done&gt;</td>") {
		t.Errorf("alice's tasks view lacks her kit.echo task:\n%s", alice)
	}
	if strings.Contains(alice, "kit.secret") || strings.Contains(alice, "bob") || strings.Contains(alice, "0123456789") {
		t.Errorf("alice's tasks view shows a task of a tool she may not list, bob's, or a whole id:\n%s", alice)
	}
	_, op := f.get(t, "/ui/view/tasks", opToken)
	if strings.Count(op, "<tr data-tool=") != 3 || !strings.Contains(op, "toolhost.plan</td><td>bob") {
		t.Errorf("the operator's tasks view, want all three:\n%s", op)
	}
}
