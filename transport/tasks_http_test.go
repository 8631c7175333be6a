package transport_test

import (
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/toolhost/toolhost/dispatcher"
	"github.com/toolhost/toolhost/idempotency"
	"github.com/toolhost/toolhost/idempotency/redisstore"
	"github.com/toolhost/toolhost/internal/redisconn"
	"github.com/toolhost/toolhost/internal/testkit/redistest"
	"github.com/toolhost/toolhost/transport"
)

// rpc2026 sends one 2026-07-28 request that declares the tasks extension,
// as token's caller, and returns the HTTP status and the JSON-RPC answer.
func rpc2026(t *testing.T, url, token, method, name string, params map[string]any) (int, map[string]any) {
	t.Helper()
	params["_meta"] = map[string]any{
		"io.modelcontextprotocol/protocolVersion":    transport.Revision20260728,
		"io.modelcontextprotocol/clientCapabilities": map[string]any{"extensions": map[string]any{transport.ExtTasks: map[string]any{}}},
		transport.MetaTask:                           map[string]any{},
	}
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, url+"/mcp", strings.NewReader(string(body)))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", transport.Revision20260728)
	req.Header.Set("Mcp-Method", method)
	req.Header.Set("Mcp-Name", name)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	// An SSE answer carries the message on its data: line.
	for _, line := range strings.Split(string(raw), "\n") {
		if d, ok := strings.CutPrefix(line, "data: "); ok && d != "" {
			raw = []byte(d)
		}
	}
	var msg map[string]any
	if err := json.Unmarshal(raw, &msg); err != nil {
		t.Fatalf("%s: answer %q: %v", method, raw, err)
	}
	return res.StatusCode, msg
}

func startTaskHTTP(t *testing.T, url, token, tool string) string {
	t.Helper()
	_, msg := rpc2026(t, url, token, "tools/call", tool, map[string]any{"name": tool, "arguments": map[string]any{}})
	res, _ := msg["result"].(map[string]any)
	id, _ := res["taskId"].(string)
	if res["resultType"] != "task" || id == "" {
		t.Fatalf("tools/call %s: %v, want a task", tool, msg)
	}
	return id
}

func rpcErrorCode(msg map[string]any) float64 {
	e, _ := msg["error"].(map[string]any)
	c, _ := e["code"].(float64)
	return c
}

// Tasks belong to the identity that started them: another caller's
// tasks/get, tasks/update and tasks/cancel find nothing (over real HTTP
// with bearer tokens).
func TestTaskScopedToCaller(t *testing.T) {
	h := &harness{fakes: fakes{entered: make(chan struct{}), release: make(chan struct{})}}
	reg := h.registry(t)
	srv := transport.New(dispatcher.New(reg, dispatcher.Config{}), reg, transport.Options{Logger: slog.New(slog.DiscardHandler)})
	tokens, err := transport.ParseTokens("test", strings.NewReader("alice:"+aliceToken+"\nbob:"+bobToken+"\n"))
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(tokens.Require(srv.HTTPHandler()))
	t.Cleanup(hs.Close)
	url := hs.URL
	id := startTaskHTTP(t, url, aliceToken, "block_ctx")
	for _, m := range []string{"tasks/get", "tasks/update", "tasks/cancel"} {
		status, msg := rpc2026(t, url, bobToken, m, id, map[string]any{"taskId": id, "inputResponses": map[string]any{}})
		if status != http.StatusBadRequest || rpcErrorCode(msg) != -32602 {
			t.Fatalf("bob's %s of alice's task: HTTP %d %v, want -32602", m, status, msg)
		}
	}
	_, msg := rpc2026(t, url, aliceToken, "tasks/get", id, map[string]any{"taskId": id})
	if res, _ := msg["result"].(map[string]any); res["status"] != "working" {
		t.Fatalf("alice's tasks/get: %v, want her task still working", msg)
	}
	if _, msg := rpc2026(t, url, aliceToken, "tasks/cancel", id, map[string]any{"taskId": id}); msg["error"] != nil {
		t.Fatalf("alice's tasks/cancel: %v", msg)
	}
	_, msg = rpc2026(t, url, aliceToken, "tasks/get", id, map[string]any{"taskId": id})
	if res, _ := msg["result"].(map[string]any); res["status"] != "cancelled" {
		t.Fatalf("after alice's cancel: %v", msg)
	}
}

// Task state lives in the shared store: with two replicas on one Redis, a
// task started on one is seen and cancelled through the other, and its
// run on the first stops (audited as cancelled).
func TestTaskAcrossReplicas(t *testing.T) {
	srv := redistest.Start(t)
	var urls []string
	var logs []logLines
	for range 2 {
		c, err := redisconn.Open(redisconn.Options{URL: srv.URL()})
		if err != nil {
			t.Fatal(err)
		}
		store := redisstore.New(redisstore.Options{Conn: c, Poll: 20 * time.Millisecond, Errors: dispatcher.OutcomeErrors})
		t.Cleanup(func() { store.Close(); c.Close() })
		h := &harness{fakes: fakes{entered: make(chan struct{}), release: make(chan struct{})}}
		reg := h.registry(t)
		lines := make(logLines, 64)
		s := transport.New(dispatcher.New(reg, dispatcher.Config{Idempotency: idempotency.Store(store)}), reg, transport.Options{
			Logger: slog.New(slog.NewJSONHandler(lines, nil)), Tasks: transport.TaskOptions{PollInterval: 10 * time.Millisecond}})
		hs := httptest.NewServer(s.HTTPHandler())
		t.Cleanup(hs.Close)
		urls, logs = append(urls, hs.URL), append(logs, lines)
	}
	id := startTaskHTTP(t, urls[0], "", "block_ctx")
	_, msg := rpc2026(t, urls[1], "", "tasks/get", id, map[string]any{"taskId": id})
	if res, _ := msg["result"].(map[string]any); res["status"] != "working" {
		t.Fatalf("tasks/get on the other replica: %v", msg)
	}
	if _, msg := rpc2026(t, urls[1], "", "tasks/cancel", id, map[string]any{"taskId": id}); msg["error"] != nil {
		t.Fatalf("tasks/cancel on the other replica: %v", msg)
	}
	if rec := logs[0].next(t, "call"); rec["outcome"] != "cancelled" {
		t.Fatalf("the run on the first replica ended %v, want cancelled", rec)
	}
	_, msg = rpc2026(t, urls[0], "", "tasks/get", id, map[string]any{"taskId": id})
	if res, _ := msg["result"].(map[string]any); res["status"] != "cancelled" {
		t.Fatalf("tasks/get after the cancel: %v", msg)
	}
}
