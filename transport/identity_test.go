package transport_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolhost/toolhost/access"
	"github.com/toolhost/toolhost/transport"
)

// keyedCount calls text.count as token with an idempotency key.
func (o *oauthServer) keyedCount(t *testing.T, token, key string) *mcp.CallToolResult {
	t.Helper()
	cs, err := connectAs(t, o.url, token)
	if err != nil {
		t.Fatal(err)
	}
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "text_count",
		Arguments: map[string]any{"text": "a b"}, Meta: mcp.Meta{transport.MetaIdempotencyKey: key}})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// TestOAuthSubjectIsNotAStaticIdentity holds issue 20's identity finding:
// a token whose subject equals a static identity ("alice") was that
// caller, and replayed its keyed results. OAuth callers are
// "oauth:SUBJECT", a namespace static identities cannot enter.
func TestOAuthSubjectIsNotAStaticIdentity(t *testing.T) {
	o := startOAuth(t, nil)
	if res := o.keyedCount(t, aliceToken, "k-1"); res.IsError {
		t.Fatalf("alice's keyed call: %+v", res.Content)
	}
	if res := o.keyedCount(t, o.token(map[string]any{"sub": "alice"}), "k-1"); res.IsError {
		t.Fatalf("the OAuth alice's keyed call: %+v", res.Content)
	}
	if n := o.h.countCalls.Load(); n != 2 {
		t.Fatalf("the tool ran %d times; want 2: the OAuth subject alice replayed the static identity alice's key", n)
	}
	if !strings.Contains(o.audit.String(), `"caller":"oauth:alice"`) {
		t.Fatalf("the audit log does not name oauth:alice:\n%s", o.audit)
	}
}

// TestAccessRulesNameOAuthCallers: a rule for the static identity alice
// does not let the OAuth subject alice in; "oauth:alice" does.
func TestAccessRulesNameOAuthCallers(t *testing.T) {
	policy, err := access.New([]access.Rule{
		{Identities: []string{"alice"}, Tools: []string{"text.count"}, Action: access.Allow},
		{Identities: []string{"oauth:bob"}, Tools: []string{"text.count"}, Action: access.Allow},
		{Identities: []string{"*"}, Tools: []string{"*"}, Action: access.Deny},
	})
	if err != nil {
		t.Fatal(err)
	}
	o := startOAuthWith(t, nil, transport.Options{Access: policy})
	if res := o.keyedCount(t, aliceToken, "a"); res.IsError {
		t.Fatalf("static alice: %+v", res.Content)
	}
	if env := failed(t, o.keyedCount(t, o.token(map[string]any{"sub": "alice"}), "b")); env.Kind != "not_found" {
		t.Fatalf("OAuth alice through alice's rule: %+v", env)
	}
	if res := o.keyedCount(t, o.token(map[string]any{"sub": "bob"}), "c"); res.IsError {
		t.Fatalf("OAuth bob through oauth:bob's rule: %+v", res.Content)
	}
}

// TestControlCharactersRefused: identities and idempotency keys are
// printable text. A key with NUL could otherwise meet another caller's
// scope (keys are scoped as caller NUL key).
func TestControlCharactersRefused(t *testing.T) {
	o := startOAuth(t, nil)
	for _, key := range []string{"a\x00b", "k\x1b]52;c;eA==\x07", "k\n", "k\u202e"} {
		env := failed(t, o.keyedCount(t, aliceToken, key))
		if env.Kind != "schema" || !strings.Contains(env.Message, transport.MetaIdempotencyKey) {
			t.Errorf("key %q: %+v; want schema naming the key", key, env)
		}
	}
	if n := o.h.countCalls.Load(); n != 0 {
		t.Errorf("the tool ran %d times for refused keys", n)
	}
	for _, sub := range []string{"alice\x00", "bob\r\nINFO forged", "\u202eeve"} {
		if resp := post(t, o.url, o.token(map[string]any{"sub": sub})); resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("subject %q: %d, want 401", sub, resp.StatusCode)
		}
	}
	for _, line := range []string{"al\x00ice:" + aliceToken, "\x1b[2J:" + aliceToken, "a\u202eb:" + aliceToken} {
		if _, err := transport.ParseTokens("tokens", strings.NewReader(line)); err == nil || !strings.Contains(err.Error(), "tokens:1:") {
			t.Errorf("token line %q: %v; want an error naming the line", line, err)
		}
	}
}

// tasksAs connects to o with token, able to send tasks/get.
func (o *oauthServer) tasksAs(t *testing.T, token string) *mcp.ClientSession {
	t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "identity-test", Version: "0"}, nil)
	if err := mcp.AddSendingCustomMethod[*taskIDParams, *taskReply](c, "tasks/get"); err != nil {
		t.Fatal(err)
	}
	cs, err := c.Connect(t.Context(), &mcp.StreamableClientTransport{
		Endpoint: o.url, HTTPClient: &http.Client{Transport: bearer{token}}, DisableStandaloneSSE: true,
	}, &mcp.ClientSessionOptions{ProtocolVersion: transport.Revision20251125})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// TestOAuthSubjectDoesNotSeeStaticTasks: the OAuth subject alice cannot
// read the static identity alice's task (issue 20).
func TestOAuthSubjectDoesNotSeeStaticTasks(t *testing.T) {
	o := startOAuth(t, nil)
	alice := o.tasksAs(t, aliceToken)
	id := startTask(t, alice, "text_count", map[string]any{"text": "a b"}, nil)
	if _, err := tasksCall(t, alice, "tasks/get", id); err != nil {
		t.Fatalf("alice's own task: %v", err)
	}
	_, err := tasksCall(t, o.tasksAs(t, o.token(map[string]any{"sub": "alice"})), "tasks/get", id)
	if err == nil {
		t.Fatal("the OAuth subject alice read the static identity alice's task")
	}
}
