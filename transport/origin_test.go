package transport_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/toolhost/toolhost/transport"
)

// endpoints are the paths serve mounts; the guard must hold on each.
var endpoints = []string{"/mcp", "/events", "/metrics", "/rpc", "/healthz", "/readyz"}

// guarded serves a mux answering 200 on every endpoint behind Guard with
// the given allowed origins, on a real loopback listener.
func guarded(t *testing.T, allowed ...string) *httptest.Server {
	t.Helper()
	origins, err := transport.ParseOrigins(allowed)
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	for _, p := range endpoints {
		mux.HandleFunc(p, func(w http.ResponseWriter, _ *http.Request) { fmt.Fprintln(w, "served", p) })
	}
	srv := httptest.NewServer(origins.Guard(mux))
	t.Cleanup(srv.Close)
	return srv
}

type rpcError struct {
	ID    json.RawMessage `json:"id"`
	Error struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// do sends a GET to path with extra headers ("Host" sets the Host) and
// returns the response and its body.
func do(t *testing.T, method, url string, header map[string]string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		if k == "Host" {
			req.Host = v
			continue
		}
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

// wantForbidden checks a 403 whose body is a JSON-RPC error without an id.
func wantForbidden(t *testing.T, resp *http.Response, body, mention string) {
	t.Helper()
	var e rpcError
	if resp.StatusCode != http.StatusForbidden || json.Unmarshal([]byte(body), &e) != nil ||
		string(e.ID) != "null" || e.Error.Code != -32600 || !strings.Contains(e.Error.Message, mention) {
		t.Fatalf("HTTP %d %q; want 403 with a JSON-RPC error (id null) mentioning %q", resp.StatusCode, body, mention)
	}
}

func TestGuardRefusesForeignOriginsAndHosts(t *testing.T) {
	srv := guarded(t, "http://allowed.example:8080")
	for _, p := range endpoints {
		t.Run(p, func(t *testing.T) {
			resp, body := do(t, http.MethodGet, srv.URL+p, nil)
			if resp.StatusCode != 200 {
				t.Fatalf("no Origin: HTTP %d %q; want it served", resp.StatusCode, body)
			}
			for _, origin := range []string{"http://evil.example", "null", "http://allowed.example", "https://allowed.example:8080"} {
				resp, body = do(t, http.MethodGet, srv.URL+p, map[string]string{"Origin": origin})
				wantForbidden(t, resp, body, "is not allowed")
				if resp.Header.Get("Access-Control-Allow-Origin") != "" {
					t.Fatalf("a refused origin got CORS headers")
				}
			}
			// DNS rebinding: evil.example now resolves to 127.0.0.1.
			for _, host := range []string{"evil.example", "evil.example:" + strings.Split(srv.URL, ":")[2], "10.0.0.1"} {
				resp, body = do(t, http.MethodGet, srv.URL+p, map[string]string{"Host": host})
				wantForbidden(t, resp, body, "invalid Host header")
			}
			for _, host := range []string{"localhost", "LOCALHOST:1", "127.0.0.1:9", "[::1]:7331"} {
				if resp, body = do(t, http.MethodGet, srv.URL+p, map[string]string{"Host": host}); resp.StatusCode != 200 {
					t.Fatalf("Host %s: HTTP %d %q; want loopback names served", host, resp.StatusCode, body)
				}
			}
			resp, body = do(t, http.MethodGet, srv.URL+p, map[string]string{"Sec-Fetch-Site": "cross-site"})
			wantForbidden(t, resp, body, "cross-site")
		})
	}
}

func TestGuardAllowedOriginGetsCORS(t *testing.T) {
	srv := guarded(t, "HTTP://Allowed.Example:8080/")
	resp, body := do(t, http.MethodGet, srv.URL+"/events", map[string]string{"Origin": "http://allowed.example:8080"})
	if resp.StatusCode != 200 || resp.Header.Get("Access-Control-Allow-Origin") != "http://allowed.example:8080" ||
		!strings.Contains(resp.Header.Get("Access-Control-Expose-Headers"), "Mcp-Session-Id") {
		t.Fatalf("HTTP %d %q, headers %v", resp.StatusCode, body, resp.Header)
	}
	resp, _ = do(t, http.MethodOptions, srv.URL+"/mcp", map[string]string{
		"Origin": "http://allowed.example:8080", "Access-Control-Request-Method": "POST",
		"Access-Control-Request-Headers": "authorization, mcp-session-id",
	})
	if resp.StatusCode != http.StatusNoContent || !strings.Contains(resp.Header.Get("Access-Control-Allow-Headers"), "Authorization") {
		t.Fatalf("preflight: HTTP %d, headers %v", resp.StatusCode, resp.Header)
	}
}

func TestParseOriginsRefusesNonOrigins(t *testing.T) {
	for _, bad := range []string{"evil.example", "ftp://x.example", "http://x.example/path", "http://x.example?q", "http://u@x.example", "*"} {
		if _, err := transport.ParseOrigins([]string{bad}); err == nil {
			t.Errorf("%q was accepted as an origin", bad)
		}
	}
}

func TestRequireSaysBearer(t *testing.T) {
	tokens, err := transport.ParseTokens("test", strings.NewReader("alice:alice-0123456789abcdef\n"))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(tokens.Require(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, auth.TokenInfoFromContext(r.Context()).UserID)
	})))
	defer srv.Close()
	cases := []struct {
		name, authz, wantChallenge string
		wantStatus                 int
	}{
		{"no token", "", `Bearer realm="toolhost"`, 401},
		{"not bearer", "Basic YWxpY2U6eA==", `Bearer realm="toolhost"`, 401},
		{"unknown token", "Bearer alice-0000000000000000", `Bearer realm="toolhost", error="invalid_token"`, 401},
		{"good token", "Bearer alice-0123456789abcdef", "", 200},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := map[string]string{}
			if tc.authz != "" {
				h["Authorization"] = tc.authz
			}
			resp, body := do(t, http.MethodGet, srv.URL, h)
			got := resp.Header.Get("WWW-Authenticate")
			if resp.StatusCode != tc.wantStatus || !strings.HasPrefix(got, tc.wantChallenge) || (tc.wantChallenge == "") != (got == "") {
				t.Fatalf("HTTP %d, WWW-Authenticate %q, body %q; want %d and %q", resp.StatusCode, got, body, tc.wantStatus, tc.wantChallenge)
			}
			if tc.wantStatus == 200 && body != "alice" {
				t.Fatalf("identity %q reached the handler; want alice", body)
			}
			if tc.wantStatus == 401 {
				var e rpcError
				if json.Unmarshal([]byte(body), &e) != nil || string(e.ID) != "null" {
					t.Fatalf("401 body %q is not a JSON-RPC error", body)
				}
			}
		})
	}
}

// A request whose Origin is its own scheme, host and port (a page the
// server serves calling it back) is served without --allow-origin, as
// net/http.CrossOriginProtection serves it; a different scheme, host
// (localhost is not 127.0.0.1 to a browser) or port is foreign.
func TestGuardAllowsSameOrigin(t *testing.T) {
	srv := guarded(t)
	port := strings.Split(srv.URL, ":")[2]
	for _, c := range []struct{ host, origin string }{
		{"127.0.0.1:" + port, "http://127.0.0.1:" + port},
		{"localhost:" + port, "http://LOCALHOST:" + port},
		{"[::1]:" + port, "http://[::1]:" + port},
	} {
		resp, body := do(t, http.MethodPost, srv.URL+"/mcp", map[string]string{"Host": c.host, "Origin": c.origin})
		if resp.StatusCode != 200 || resp.Header.Get("Access-Control-Allow-Origin") != "" {
			t.Errorf("Host %s, Origin %s: HTTP %d %q (CORS %q); want served, without CORS headers",
				c.host, c.origin, resp.StatusCode, body, resp.Header.Get("Access-Control-Allow-Origin"))
		}
	}
	for _, c := range []struct{ host, origin string }{
		{"127.0.0.1:" + port, "https://127.0.0.1:" + port},
		{"127.0.0.1:" + port, "http://localhost:" + port},
		{"127.0.0.1:" + port, "http://127.0.0.1:1"},
		{"127.0.0.1:" + port, "http://127.0.0.1"},
		{"127.0.0.1:" + port, "http://127.0.0.1:" + port + "/page"},
		{"evil.example:" + port, "http://evil.example:" + port}, // rebinding: the Host rule comes first
	} {
		resp, body := do(t, http.MethodPost, srv.URL+"/mcp", map[string]string{"Host": c.host, "Origin": c.origin})
		if resp.StatusCode != http.StatusForbidden {
			t.Errorf("Host %s, Origin %s: HTTP %d %q; want 403", c.host, c.origin, resp.StatusCode, body)
		}
	}
}
