package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/toolhost/toolhost/internal/testkit/oauthtest"
	"github.com/toolhost/toolhost/internal/testkit/testwasm"
)

// TestE2EOAuth: serve with [auth.oauth] against a test issuer on loopback
// publishes the metadata, challenges a call without a token, accepts a
// token minted for it through `toolhost call` and $TOOLHOST_TOKEN, keeps
// the static token file working, and refuses a token for another
// resource.
func TestE2EOAuth(t *testing.T) {
	is := oauthtest.New(t)
	conf := filepath.Join(t.TempDir(), "toolhost.toml")
	if err := os.WriteFile(conf, []byte(`[auth.oauth]
issuer = "`+is.URL+`"
required_scopes = ["tools:call"]
allow_networks = ["127.0.0.1"]
`), 0o600); err != nil {
		t.Fatal(err)
	}
	srv := startServer(t, testwasm.Dir(t, testwasm.WAT(t, "host/testdata/wat/echo.wat")),
		"--config", conf, "--token-file", tokenFile(t))
	base := strings.TrimSuffix(srv.url, "/mcp")
	metaURL := base + "/.well-known/oauth-protected-resource/mcp"

	status, header, _ := edgeRequest(t, "POST", srv.url, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, nil)
	if want := `Bearer resource_metadata="` + metaURL + `", scope="tools:call"`; status != 401 || header.Get("WWW-Authenticate") != want {
		t.Fatalf("no token: %d %q, want 401 %q", status, header.Get("WWW-Authenticate"), want)
	}
	status, _, body := edgeRequest(t, "GET", metaURL, "", nil)
	var prm map[string]any
	if err := json.Unmarshal([]byte(body), &prm); status != 200 || err != nil {
		t.Fatalf("metadata: %d %v %s", status, err, body)
	}
	if prm["resource"] != srv.url || prm["authorization_servers"].([]any)[0] != is.URL {
		t.Fatalf("metadata %v: want resource %s and authorization server %s", prm, srv.url, is.URL)
	}

	mint := func(aud string) string {
		now := time.Now()
		return is.Mint(map[string]any{"iss": is.URL, "aud": aud, "sub": "dana", "scope": "tools:call",
			"iat": now.Unix(), "exp": now.Add(10 * time.Minute).Unix()})
	}
	out, errOut, code := srv.cliEnv(t, []string{"TOOLHOST_TOKEN=" + mint(srv.url)}, "call", "wat.echo", `{"x":1}`)
	if code != 0 || !strings.Contains(out, `"x":1`) {
		t.Fatalf("call with an OAuth token: exit %d\nstdout %s\nstderr %s", code, out, errOut)
	}
	if _, errOut, code := srv.cliEnv(t, []string{"TOOLHOST_TOKEN=" + aliceToken}, "call", "wat.echo", `{}`); code != 0 {
		t.Fatalf("static token beside OAuth: exit %d: %s", code, errOut)
	}
	_, errOut, code = srv.cliEnv(t, []string{"TOOLHOST_TOKEN=" + mint("https://elsewhere.example.com/mcp")}, "call", "wat.echo", `{}`)
	if code == 0 || !strings.Contains(errOut, "401") || !strings.Contains(errOut, "audience") {
		t.Fatalf("token for another resource: exit %d: %s; want a 401 saying the audience is wrong", code, errOut)
	}
	_, errOut, code = srv.cliEnv(t, []string{"TOOLHOST_TOKEN=" + is.Mint(map[string]any{"iss": is.URL, "aud": srv.url,
		"sub": "dana", "scope": "tools:read", "exp": time.Now().Add(time.Minute).Unix()})}, "call", "wat.echo", `{}`)
	if code == 0 || !strings.Contains(errOut, "403 Forbidden") || !strings.Contains(errOut, "lacks scope tools:call") {
		t.Fatalf("token without the required scope: exit %d: %s; want a 403 naming the scope", code, errOut)
	}
	srv.stop(t) // the audit line may follow the answer: read the log once it is complete
	if !strings.Contains(srv.stderr.String(), `"caller":"oauth:dana"`) {
		t.Fatalf("the audit log does not name the token's subject:\n%s", srv.stderr.String())
	}
}

// Off loopback, [auth.oauth] stands in for a token file, but the resource
// URL must be given: it cannot be guessed from 0.0.0.0.
func TestServeOAuthOffLoopbackNeedsResource(t *testing.T) {
	conf := filepath.Join(t.TempDir(), "toolhost.toml")
	if err := os.WriteFile(conf, []byte("[auth.oauth]\nissuer = \"https://auth.example.com\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(buildCLI(t), "serve", "--addr", "0.0.0.0:0", "--plugins", t.TempDir(), "--config", conf)
	cmd.Env = append(os.Environ(), "TOOLHOST_TOKENS=")
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), `[auth.oauth] needs resource = "https://…/mcp"`) || strings.Contains(string(out), "--token-file") {
		t.Fatalf("err %v, output %q; want a refusal asking for resource, not for a token file", err, out)
	}
}
