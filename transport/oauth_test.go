package transport_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"github.com/toolhost/toolhost/access"
	"github.com/toolhost/toolhost/dispatcher"
	"github.com/toolhost/toolhost/internal/oauth"
	"github.com/toolhost/toolhost/internal/testkit/oauthtest"
	"github.com/toolhost/toolhost/transport"
)

// testClock is an injectable clock for the verifier.
type testClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *testClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *testClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// oauthServer is the fake tools served at /mcp behind static tokens (alice,
// bob) and OAuth tokens of a test issuer, with the metadata documents
// mounted as serve mounts them.
type oauthServer struct {
	url      string // of /mcp: the resource
	issuer   *oauthtest.Issuer
	verifier *oauth.Verifier
	clock    *testClock
	audit    *syncBuf
	h        *harness
}

type syncBuf struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuf) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuf) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func startOAuth(t *testing.T, edit func(*oauth.Config)) *oauthServer {
	t.Helper()
	return startOAuthWith(t, edit, transport.Options{})
}

// startOAuthWith is startOAuth with transport options (its Logger is
// replaced by the audit buffer).
func startOAuthWith(t *testing.T, edit func(*oauth.Config), opts transport.Options) *oauthServer {
	t.Helper()
	o := &oauthServer{issuer: oauthtest.New(t), clock: &testClock{t: time.Now()}, audit: &syncBuf{}}
	h := &harness{fakes: fakes{entered: make(chan struct{}), release: make(chan struct{})}}
	o.h = h
	reg := h.registry(t)
	opts.Logger = slog.New(slog.NewJSONHandler(o.audit, nil))
	srv := transport.New(dispatcher.New(reg, dispatcher.Config{}), reg, opts)
	tokens, err := transport.ParseTokens("test", strings.NewReader("alice:"+aliceToken+"\n"))
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	hs := httptest.NewServer(mux)
	t.Cleanup(func() {
		hs.CloseClientConnections()
		hs.Close()
	})
	o.url = hs.URL + "/mcp"
	cfg := oauth.Config{Issuer: o.issuer.URL, Resource: o.url, Now: o.clock.Now,
		AllowNetworks: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}}
	if edit != nil {
		edit(&cfg)
	}
	o.verifier, err = oauth.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for path, h := range o.verifier.MetadataHandlers() {
		mux.Handle(path, h)
	}
	mux.Handle("/mcp", transport.RequireAny(tokens, o.verifier, srv.HTTPHandler()))
	return o
}

// token mints a JWT for this server, with claim edits (nil deletes).
func (o *oauthServer) token(edit map[string]any) string {
	now := o.clock.Now()
	c := map[string]any{"iss": o.issuer.URL, "aud": o.url, "sub": "oauth-user", "scope": "tools:call",
		"iat": now.Unix(), "exp": now.Add(10 * time.Minute).Unix()}
	for k, v := range edit {
		if v == nil {
			delete(c, k)
		} else {
			c[k] = v
		}
	}
	return o.issuer.Mint(c)
}

// callAs connects with token through the SDK client and calls text.count.
func (o *oauthServer) callAs(t *testing.T, token string) error {
	t.Helper()
	cs, err := connectAs(t, o.url, token)
	if err != nil {
		return err
	}
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "text_count", Arguments: map[string]any{"text": "a b"}})
	if err != nil {
		return err
	}
	if res.IsError {
		t.Fatalf("call failed: %+v", res.Content)
	}
	return nil
}

// post sends a bare initialize with token ("" for none) and returns the
// answer (its body read into body).
func post(t *testing.T, url, token string) *http.Response {
	resp, _ := postBody(t, url, token)
	return resp
}

func postBody(t *testing.T, url, token string) (*http.Response, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	resp.Body.Close()
	return resp, string(b)
}

func TestOAuthEndToEnd(t *testing.T) {
	o := startOAuth(t, nil)
	// A valid token: the call goes through, under the token's subject.
	if err := o.callAs(t, o.token(nil)); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(o.audit.String(), `"caller":"oauth:oauth-user"`) {
		t.Fatalf("the audit log does not name the token's subject:\n%s", o.audit)
	}
	// Static tokens keep working beside OAuth.
	if err := o.callAs(t, aliceToken); err != nil {
		t.Fatalf("static token: %v", err)
	}
	for _, tt := range []struct {
		name string
		edit map[string]any
	}{
		{"wrong audience", map[string]any{"aud": "https://other.example.com/mcp"}},
		{"expired", map[string]any{"exp": o.clock.Now().Add(-time.Hour).Unix()}},
		{"wrong issuer", map[string]any{"iss": "https://evil.example.com"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tok := o.token(tt.edit)
			if err := o.callAs(t, tok); err == nil || !strings.Contains(err.Error(), "Unauthorized") {
				t.Fatalf("SDK client: %v, want 401 Unauthorized", err)
			}
			resp := post(t, o.url, tok)
			if resp.StatusCode != 401 || !strings.Contains(resp.Header.Get("WWW-Authenticate"), `error="invalid_token"`) {
				t.Fatalf("%d %q, want 401 with error=\"invalid_token\"", resp.StatusCode, resp.Header.Get("WWW-Authenticate"))
			}
		})
	}
}

func TestOAuthKeyRotation(t *testing.T) {
	o := startOAuth(t, nil)
	if err := o.callAs(t, o.token(nil)); err != nil {
		t.Fatal(err)
	}
	o.issuer.Rotate()
	o.issuer.Retire()
	o.clock.Advance(oauth.DefaultRefreshInterval)
	if err := o.callAs(t, o.token(nil)); err != nil {
		t.Fatalf("token signed with the new key: %v", err)
	}
	if n := o.issuer.JWKSFetches.Load(); n != 2 {
		t.Fatalf("JWKS fetched %d times, want 2", n)
	}
}

func TestOAuthInsufficientScope(t *testing.T) {
	o := startOAuth(t, func(c *oauth.Config) { c.RequiredScopes = []string{"tools:call", "tools:admin"} })
	tok := o.token(nil) // tools:call only
	resp := post(t, o.url, tok)
	want := `Bearer error="insufficient_scope", error_description="the token lacks scope tools:admin", ` +
		`resource_metadata="` + o.verifier.MetadataURL() + `", scope="tools:call tools:admin"`
	if resp.StatusCode != 403 || resp.Header.Get("WWW-Authenticate") != want {
		t.Fatalf("%d %q\nwant 403 %q", resp.StatusCode, resp.Header.Get("WWW-Authenticate"), want)
	}
	if err := o.callAs(t, tok); err == nil || !strings.Contains(err.Error(), "Forbidden") {
		t.Fatalf("SDK client: %v, want 403 Forbidden", err)
	}
	if err := o.callAs(t, o.token(map[string]any{"scope": "tools:admin tools:call"})); err != nil {
		t.Fatalf("with both scopes: %v", err)
	}
}

func TestOAuthOpaqueTokenIntrospected(t *testing.T) {
	var o *oauthServer
	o = startOAuth(t, func(c *oauth.Config) {
		c.IntrospectionURL = c.Issuer + "/introspect"
		c.ClientID, c.ClientSecret = oauthtest.ClientID, oauthtest.ClientSecret
	})
	tok := o.issuer.Opaque(map[string]any{"sub": "opaque-user", "scope": "tools:call", "aud": o.url,
		"exp": o.clock.Now().Add(time.Hour).Unix()})
	if err := o.callAs(t, tok); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(o.audit.String(), `"caller":"oauth:opaque-user"`) {
		t.Fatalf("the audit log does not name the introspected subject:\n%s", o.audit)
	}
	if err := o.callAs(t, "opaque-never-issued-0123456789"); err == nil || !strings.Contains(err.Error(), "Unauthorized") {
		t.Fatalf("unknown opaque token: %v", err)
	}
}

// The 401 without a token points at the metadata, whose document names
// the issuer and the resource, at both well-known locations.
func TestOAuthChallengeAndMetadata(t *testing.T) {
	o := startOAuth(t, func(c *oauth.Config) { c.RequiredScopes = []string{"tools:call"} })
	resp := post(t, o.url, "")
	wantHeader := `Bearer resource_metadata="` + strings.Replace(o.url, "/mcp", "/.well-known/oauth-protected-resource/mcp", 1) + `", scope="tools:call"`
	if resp.StatusCode != 401 || resp.Header.Get("WWW-Authenticate") != wantHeader {
		t.Fatalf("%d %q\nwant 401 %q", resp.StatusCode, resp.Header.Get("WWW-Authenticate"), wantHeader)
	}
	// The SDK's own client code finds and checks the document from the
	// challenge, as an MCP client would.
	chs, err := oauthex.ParseWWWAuthenticate(resp.Header.Values("WWW-Authenticate"))
	if err != nil || len(chs) != 1 || chs[0].Params["resource_metadata"] != o.verifier.MetadataURL() {
		t.Fatalf("challenges %+v, %v", chs, err)
	}
	prm, err := oauthex.GetProtectedResourceMetadata(context.Background(), chs[0].Params["resource_metadata"], o.url, http.DefaultClient)
	if err != nil {
		t.Fatal(err)
	}
	if prm.Resource != o.url || len(prm.AuthorizationServers) != 1 || prm.AuthorizationServers[0] != o.issuer.URL ||
		strings.Join(prm.ScopesSupported, " ") != "tools:call" || strings.Join(prm.BearerMethodsSupported, " ") != "header" {
		t.Fatalf("metadata %+v", prm)
	}
	root := strings.TrimSuffix(o.url, "/mcp")
	resp2, err := http.Get(root + "/.well-known/oauth-protected-resource")
	if err != nil {
		t.Fatal(err)
	}
	defer resp2.Body.Close()
	var doc map[string]any
	if err := json.NewDecoder(resp2.Body).Decode(&doc); err != nil || doc["resource"] != root {
		t.Fatalf("root document %v (%v): want resource %s (RFC 9728 §3.3)", doc, err, root)
	}
}

// An issuer that cannot be reached makes a token uncheckable, not wrong:
// 503 with Retry-After, so clients retry rather than sign in again, and a
// body that names no address inside the network.
func TestOAuthIssuerDownIs503(t *testing.T) {
	o := startOAuth(t, nil)
	tok := o.token(nil)
	o.issuer.Server.Close()
	resp, body := postBody(t, o.url, tok)
	if strings.Contains(body, "127.0.0.1") || !strings.Contains(body, "could not be reached") {
		t.Fatalf("body %s: want the reason without the issuer's address", body)
	}
	if resp.StatusCode != 503 || resp.Header.Get("Retry-After") == "" || resp.Header.Get("WWW-Authenticate") != "" {
		t.Fatalf("%d, Retry-After %q, WWW-Authenticate %q; want 503 with Retry-After and no challenge",
			resp.StatusCode, resp.Header.Get("Retry-After"), resp.Header.Get("WWW-Authenticate"))
	}
	// Static tokens do not need the issuer.
	if err := o.callAs(t, aliceToken); err != nil {
		t.Fatalf("static token while the issuer is down: %v", err)
	}
}

// An OAuth token's scopes reach the access rules: a rule granting by
// scope lists and runs the tool for a token carrying it, and hides it from
// one that does not.
func TestOAuthScopesDriveAccessRules(t *testing.T) {
	policy, err := access.New([]access.Rule{
		{Scopes: []string{"tools:count"}, Tools: []string{"text.count"}, Action: access.Allow},
		{Identities: []string{"*"}, Tools: []string{"*"}, Action: access.Deny},
	})
	if err != nil {
		t.Fatal(err)
	}
	o := startOAuthWith(t, nil, transport.Options{Access: policy})
	names := func(token string) []string {
		cs, err := connectAs(t, o.url, token)
		if err != nil {
			t.Fatal(err)
		}
		res, err := cs.ListTools(context.Background(), nil)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, tool := range res.Tools {
			out = append(out, tool.Name)
		}
		return out
	}
	if got := names(o.token(map[string]any{"scope": "tools:count"})); strings.Join(got, ",") != "text_count" {
		t.Fatalf("with scope tools:count: %v, want text_count only", got)
	}
	if err := o.callAs(t, o.token(map[string]any{"scope": "tools:count"})); err != nil {
		t.Fatal(err)
	}
	if got := names(o.token(map[string]any{"scope": "tools:other"})); len(got) != 0 {
		t.Fatalf("without the scope: %v, want nothing", got)
	}
}
