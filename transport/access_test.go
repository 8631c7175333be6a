package transport_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolhost/toolhost/access"
	"github.com/toolhost/toolhost/dispatcher"
	"github.com/toolhost/toolhost/plan"
	"github.com/toolhost/toolhost/transport"
)

// lockedBuffer is a log sink the server writes from many goroutines.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

// lines are the JSON log records with msg "call".
func (l *lockedBuffer) calls(t *testing.T) []map[string]any {
	t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(l.b.String()), "\n") {
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		if rec["msg"] == "call" {
			out = append(out, rec)
		}
	}
	return out
}

// accessRules: alice may use the text tools and plans, bob the list and
// failing tools; everyone else nothing (the deny-all last rule).
func accessRules(t *testing.T) *access.Policy {
	t.Helper()
	p, err := access.New([]access.Rule{
		{Identities: []string{"alice"}, Tools: []string{"text.*", "toolhost.plan"}, Action: access.Allow, Line: 10},
		{Identities: []string{"b?b"}, Tools: []string{"list.numbers", "fail.*"}, Action: access.Allow, Line: 20},
		{Scopes: []string{"tools:block"}, Tools: []string{"block.*"}, Action: access.Allow, Line: 25},
		{Identities: []string{"*"}, Tools: []string{"*"}, Action: access.Deny, Line: 30},
	})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// accessServer serves the fake tools and toolhost.plan over Streamable
// HTTP behind alice's and bob's static tokens, with accessRules, and
// returns its URL and its log.
func accessServer(t *testing.T, wrap func(http.Handler) http.Handler) (string, *lockedBuffer) {
	t.Helper()
	h := &harness{fakes: fakes{entered: make(chan struct{}), release: make(chan struct{})}}
	reg := h.registry(t)
	log := &lockedBuffer{}
	srv := transport.New(dispatcher.New(reg, dispatcher.Config{}), reg, transport.Options{
		Logger: slog.New(slog.NewJSONHandler(log, nil)), Access: accessRules(t), Plans: &transport.PlanOptions{},
	})
	if wrap == nil {
		tokens, err := transport.ParseTokens("test", strings.NewReader("alice:"+aliceToken+"\nbob:"+bobToken+"\n"))
		if err != nil {
			t.Fatal(err)
		}
		wrap = tokens.Require
	}
	hs := httptest.NewServer(wrap(srv.HTTPHandler()))
	t.Cleanup(func() {
		hs.CloseClientConnections()
		hs.Close()
	})
	return hs.URL, log
}

func listedNames(t *testing.T, cs *mcp.ClientSession) []string {
	t.Helper()
	return slices.Sorted(maps.Keys(listed(t, cs)))
}

func callAs(t *testing.T, cs *mcp.ClientSession, name string, meta mcp.Meta) *mcp.CallToolResult {
	t.Helper()
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: name, Arguments: map[string]any{"text": "a b"}, Meta: meta})
	if err != nil {
		t.Fatalf("tools/call %s: %v", name, err)
	}
	return res
}

func TestAccessListsPerCaller(t *testing.T) {
	url, _ := accessServer(t, nil)
	alice, err := connectAs(t, url, aliceToken)
	if err != nil {
		t.Fatal(err)
	}
	bob, err := connectAs(t, url, bobToken)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := listedNames(t, alice), []string{"text_count", "toolhost_plan"}; !slices.Equal(got, want) {
		t.Errorf("alice sees %v, want %v", got, want)
	}
	if got, want := listedNames(t, bob), []string{"fail_internal", "fail_plain", "fail_schema", "fail_transient", "list_numbers"}; !slices.Equal(got, want) {
		t.Errorf("bob sees %v, want %v", got, want)
	}
	// Each may call what it sees.
	if res := callAs(t, alice, "text_count", nil); res.IsError {
		t.Errorf("alice text_count: %+v", res)
	}
	if res := callAs(t, bob, "list.numbers", nil); res.IsError {
		t.Errorf("bob list.numbers: %+v", res)
	}
}

// TestAccessDeniedIsNotFound: a tool the caller may not see answers
// exactly as a name that does not exist, by either name form, with a
// mismatching _meta name, and for toolhost.plan; the audit line says
// denied, with the rule.
func TestAccessDeniedIsNotFound(t *testing.T) {
	url, log := accessServer(t, nil)
	alice, _ := connectAs(t, url, aliceToken)
	bob, _ := connectAs(t, url, bobToken)

	same := func(who string, denied, missing *mcp.CallToolResult, deniedName, missingName string) {
		t.Helper()
		d, _ := json.Marshal(denied)
		m, _ := json.Marshal(missing)
		// The request ids differ by design; everything else is the same
		// once the names are swapped.
		d = bytes.Replace(d, []byte(denied.Meta[transport.MetaRequestID].(string)), []byte("ID"), 1)
		m = bytes.Replace(m, []byte(missing.Meta[transport.MetaRequestID].(string)), []byte("ID"), 1)
		m = bytes.ReplaceAll(m, []byte(missingName), []byte(deniedName))
		if !bytes.Equal(d, m) {
			t.Errorf("%s: denied %s answers\n%s\nbut a missing tool answers\n%s", who, deniedName, d, m)
		}
		if env := failed(t, denied); env.Kind != "not_found" || env.JSONRPCCode != -32601 {
			t.Errorf("%s: envelope %+v", who, env)
		}
	}
	same("alice", callAs(t, alice, "list_numbers", nil), callAs(t, alice, "nope_xxxxxxx", nil), "list_numbers", "nope_xxxxxxx")
	same("alice", callAs(t, alice, "list.numbers", nil), callAs(t, alice, "nope.xxxxxxx", nil), "list.numbers", "nope.xxxxxxx")
	// resolve's schema refusal would name the tool: access must come first.
	same("alice", callAs(t, alice, "block_ctx", mcp.Meta{transport.MetaToolName: "text.count"}),
		callAs(t, alice, "nope_xxxx", mcp.Meta{transport.MetaToolName: "text.count"}), "block_ctx", "nope_xxxx")
	same("bob", callAs(t, bob, "toolhost_plan", nil), callAs(t, bob, "nope_xxxxxxxx", nil), "toolhost_plan", "nope_xxxxxxxx")

	var denied []map[string]any
	for _, rec := range log.calls(t) {
		if rec["outcome"] == "denied" {
			denied = append(denied, rec)
		}
	}
	if len(denied) != 4 {
		t.Fatalf("%d denied audit lines, want 4: %v", len(denied), denied)
	}
	for i, tool := range []string{"list.numbers", "list.numbers", "block.ctx", "toolhost.plan"} {
		rec := denied[i]
		if rec["tool"] != tool || rec["access_rule"] != 4.0 || rec["access_line"] != 30.0 {
			t.Errorf("audit line %d: %v; want tool %s, rule 4 at line 30", i, rec, tool)
		}
	}
	for _, rec := range log.calls(t) {
		if strings.HasPrefix(rec["tool"].(string), "nope") && rec["outcome"] != "not_found" {
			t.Errorf("a missing tool's audit line: %v", rec)
		}
	}
}

func TestAccessPlanStepsChecked(t *testing.T) {
	url, log := accessServer(t, nil)
	alice, _ := connectAs(t, url, aliceToken)
	res, err := alice.CallTool(t.Context(), &mcp.CallToolParams{Name: transport.PlanWireName, Arguments: json.RawMessage(`{"goal":"g","steps":[
		{"id":1,"tool_name":"text.count","args":{"text":"a b c"}},
		{"id":2,"tool_name":"list_numbers","args":{}}]}`)})
	if err != nil {
		t.Fatal(err)
	}
	var sr plan.SessionResult
	b, _ := json.Marshal(res.StructuredContent)
	if err := json.Unmarshal(b, &sr); err != nil {
		t.Fatal(err)
	}
	if !res.IsError || sr.StepsExecuted != 2 || len(sr.History) != 2 || sr.History[1].Error == nil {
		t.Fatalf("session %s", b)
	}
	if e := sr.History[1].Error; e.Kind != "not_found" || e.Message != `no tool named "list_numbers" (toolhost list shows the tools this server has)` {
		t.Errorf("step 2 error %+v", e)
	}
	var steps []string
	for _, rec := range log.calls(t) {
		steps = append(steps, rec["tool"].(string)+":"+rec["outcome"].(string))
		if rec["outcome"] == "denied" && (rec["access_rule"] != 4.0 || rec["access_line"] != 30.0 || rec["caller"] != "alice") {
			t.Errorf("denied step's audit line %v", rec)
		}
	}
	if !slices.Equal(steps, []string{"text.count:ok", "list_numbers:denied"}) {
		t.Errorf("audit lines %v", steps)
	}
}

// TestAccessScopes: a token's scopes (auth.TokenInfo.Scopes, as an OAuth
// verifier fills them) count in the rules.
func TestAccessScopes(t *testing.T) {
	verify := func(_ context.Context, token string, _ *http.Request) (*auth.TokenInfo, error) {
		scopes := []string{"tools:other"}
		if token == "with-scope-0123456789" {
			scopes = append(scopes, "tools:block")
		}
		return &auth.TokenInfo{UserID: "carol", Scopes: scopes, Expiration: time.Now().Add(time.Hour)}, nil
	}
	url, _ := accessServer(t, auth.RequireBearerToken(verify, nil))
	with, err := connectAs(t, url, "with-scope-0123456789")
	if err != nil {
		t.Fatal(err)
	}
	without, err := connectAs(t, url, "no-scope-0123456789")
	if err != nil {
		t.Fatal(err)
	}
	if got := listedNames(t, with); !slices.Equal(got, []string{"block_ctx", "block_wait"}) {
		t.Errorf("with tools:block: %v", got)
	}
	if got := listedNames(t, without); len(got) != 0 {
		t.Errorf("without tools:block: %v", got)
	}
}
