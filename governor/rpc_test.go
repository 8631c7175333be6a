package governor

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func rpcServer(t *testing.T) (*Governor, *httptest.Server) {
	t.Helper()
	g, err := New(Config{Broadcast: -1, Quotas: []Quota{{Name: "gh", Capacity: 60, Interval: time.Minute, Burst: 2}}})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(g.RPCHandler())
	t.Cleanup(func() { srv.Close(); g.Close() })
	return g, srv
}

func post(t *testing.T, srv *httptest.Server, body string) (int, string) {
	t.Helper()
	resp, err := http.Post(srv.URL, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func TestRPC(t *testing.T) {
	_, srv := rpcServer(t)
	tests := []struct {
		name, req string
		want      []string // substrings of the response
	}{
		{"acquire", `{"jsonrpc":"2.0","id":1,"method":"governor.acquire","params":{"quota":"gh","priority":"interactive","agent":"a1"}}`,
			[]string{`"id":1`, `"result":{"quota":"gh","cost":1,"priority":"interactive"`, `"state":{"quota":"gh"`}},
		{"acquire the rest", `{"jsonrpc":"2.0","id":2,"method":"governor.acquire","params":{"quota":"gh","wait_ms":0}}`,
			[]string{`"result":{"quota":"gh","cost":1,"priority":"normal"`}},
		{"refused fast", `{"jsonrpc":"2.0","id":3,"method":"governor.acquire","params":{"quota":"gh","wait_ms":100}}`,
			[]string{`"code":-32603`, `"kind":"rate_limited"`, `"retry_after_ms":`, `"quota":"gh"`}},
		{"report", `{"jsonrpc":"2.0","id":"r","method":"governor.report","params":{"quota":"gh","status":429,"retry_after_ms":30000}}`,
			[]string{`"id":"r"`, `"mode":"blocked"`, `"blocked_until":"`}},
		{"status", `{"jsonrpc":"2.0","id":4,"method":"governor.status"}`,
			[]string{`"result":{"quotas":[{"quota":"gh"`, `"mode":"blocked"`, `"limit":{"capacity":60,"interval_ms":60000,"burst":2}`,
				`"agents":{"":{"used":1},"a1":{"used":1}}`}},
		{"agent with a control character", `{"jsonrpc":"2.0","id":12,"method":"governor.acquire","params":{"quota":"gh","agent":"a\u0000b"}}`,
			[]string{`"code":-32602`, `"kind":"schema"`, `agent holds a control character`}},
		{"agent too long", `{"jsonrpc":"2.0","id":13,"method":"governor.acquire","params":{"quota":"gh","agent":"` + strings.Repeat("x", 129) + `"}}`,
			[]string{`"code":-32602`, `agent is longer than 128 bytes`}},
		{"unknown method", `{"jsonrpc":"2.0","id":5,"method":"governor.nope"}`, []string{`"code":-32601`}},
		{"unknown quota", `{"jsonrpc":"2.0","id":6,"method":"governor.acquire","params":{"quota":"x"}}`,
			[]string{`"code":-32602`, `no quota named \"x\" (quotas: gh)`}},
		{"bad priority", `{"jsonrpc":"2.0","id":7,"method":"governor.acquire","params":{"quota":"gh","priority":"urgent"}}`,
			[]string{`"code":-32602`, `"kind":"schema"`}},
		{"unknown param", `{"jsonrpc":"2.0","id":8,"method":"governor.acquire","params":{"quota":"gh","cots":2}}`,
			[]string{`"code":-32602`, `unknown field`}},
		{"not 2.0", `{"id":9,"method":"governor.status"}`, []string{`"code":-32600`}},
		{"garbage", `{"jsonrpc":`, []string{`"code":-32700`}},
		{"batch", `[{"jsonrpc":"2.0","id":10,"method":"governor.status"},{"jsonrpc":"2.0","method":"governor.status"},{"jsonrpc":"2.0","id":11,"method":"x"}]`,
			[]string{`[{"jsonrpc":"2.0","id":10,"result"`, `{"jsonrpc":"2.0","id":11,"error"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, body := post(t, srv, tt.req)
			if code != http.StatusOK {
				t.Fatalf("status %d: %s", code, body)
			}
			for _, w := range tt.want {
				if !strings.Contains(body, w) {
					t.Errorf("response %s\nlacks %s", body, w)
				}
			}
		})
	}
}

func TestRPCNotificationAndTransport(t *testing.T) {
	_, srv := rpcServer(t)
	if code, body := post(t, srv, `{"jsonrpc":"2.0","method":"governor.status"}`); code != http.StatusNoContent || body != "" {
		t.Fatalf("notification: %d %q, want 204 and nothing", code, body)
	}
	resp, err := http.Post(srv.URL, "text/plain", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"governor.status"}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnsupportedMediaType {
		t.Fatalf("text/plain: %d, want 415 (a browser form must not reach /rpc)", resp.StatusCode)
	}
	resp, err = http.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Fatalf("GET: %d, want 405", resp.StatusCode)
	}
	req, _ := http.NewRequest(http.MethodPost, srv.URL, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"governor.status"}`))
	req.Header.Set("Content-Type", "application/json")
	req.Host = "evil.example.com"
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Fatalf("rebound Host: %d, want 403", resp.StatusCode)
	}
}

// The envelope round-trips as the CLI reads it.
func TestRPCErrorShape(t *testing.T) {
	_, srv := rpcServer(t)
	post(t, srv, `{"jsonrpc":"2.0","id":1,"method":"governor.report","params":{"quota":"gh","status":503,"retry_after_ms":2000}}`)
	_, body := post(t, srv, `{"jsonrpc":"2.0","id":2,"method":"governor.acquire","params":{"quota":"gh","wait_ms":0}}`)
	var resp struct {
		Error RPCError `json:"error"`
	}
	if err := json.Unmarshal([]byte(body), &resp); err != nil {
		t.Fatal(err)
	}
	d := resp.Error.Data
	if resp.Error.Code != -32603 || d == nil || d.Kind != "rate_limited" || d.RetryAfterMS < 1900 || d.RetryAfterMS > 2000 {
		t.Fatalf("error %+v data %+v, want rate_limited with about 2000 ms", resp.Error, d)
	}
}

// Any identity with a token may report a 429, but a report over /rpc
// blocks its quota for at most MaxReportBlock (30 s by default), not the
// 5 minutes of MaxBlock a caller could ask for before.
func TestRPCReportIsBounded(t *testing.T) {
	g, srv := rpcServer(t)
	start := time.Now()
	_, body := post(t, srv, `{"jsonrpc":"2.0","id":1,"method":"governor.report","params":{"quota":"gh","status":429,"retry_after_ms":9223372036854775807}}`)
	var resp struct {
		Result State `json:"result"`
	}
	if err := json.Unmarshal([]byte(body), &resp); err != nil || resp.Result.BlockedUntil == nil {
		t.Fatalf("%s: %v", body, err)
	}
	if until := resp.Result.BlockedUntil.Sub(start); until > g.cfg.MaxReportBlock+time.Second {
		t.Fatalf("a report blocked the quota for %v, over MaxReportBlock %v", until, g.cfg.MaxReportBlock)
	}
}
