package main

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/toolhost/toolhost/internal/testkit/testwasm"
)

// egressPlugins is a plugins folder with the egress test module as
// egress.wasm, the file name its grant names.
func egressPlugins(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(testwasm.Go(t, "./host/testdata/egress"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "egress.wasm"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// secretConfig grants egress.wasm the upstream with three secret headers
// (from the environment, a file, and a literal), and lets only alice (and
// ops) call tools; rule 2 names a tool no module has.
func secretConfig(t *testing.T, hostport, keyFile string) string {
	return writeFile(t, "toolhost.toml", fmt.Sprintf(`[grants."egress.wasm"]
hosts = ["%[1]s"]
schemes = ["http"]
allow_networks = ["127.0.0.0/8"]

[grants."egress.wasm".headers."%[1]s"]
Authorization = {env = "TOOLHOST_E2E_API_TOKEN"}
X-Key = {file = "%[2]s"}
X-Literal = "literal-secret-3c1f9a"

[[access]]
identities = ["alice", "ops"]
tools = ["egress.*"]
action = "allow"

[[access]]
identities = ["nobody"]
tools = ["egress.fetc"]
action = "allow"

[[access]]
identities = ["*"]
tools = ["*"]
action = "deny"
`, hostport, keyFile))
}

// TestE2ESecretsNeverLeak runs a full serve whose egress grant injects
// secret headers (env, file, literal) into calls to a local upstream that
// checks they arrive, with --audit-args so that arguments and results are
// logged and kept in events, then looks for the secrets in everything the
// server said: its log, /events, the tools' results and error envelopes,
// /metrics and inspect. It also checks the [[access]] rules are wired.
func TestE2ESecretsNeverLeak(t *testing.T) {
	const envSecret, fileSecret, literal = "Bearer env-secret-7d2e4b", "file-secret-9a8b7c", "literal-secret-3c1f9a"
	var arrived atomic.Int32
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/check":
			if r.Header.Get("Authorization") != envSecret || r.Header.Get("X-Key") != fileSecret || r.Header.Get("X-Literal") != literal {
				http.Error(w, "the grant's headers did not arrive", http.StatusUnauthorized)
				return
			}
			arrived.Add(1)
			io.WriteString(w, "headers arrived")
		case "/away":
			http.Redirect(w, r, "http://127.0.0.2:9/elsewhere", http.StatusFound)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(up.Close)
	u, _ := url.Parse(up.URL)
	keyFile := writeFile(t, "key", fileSecret+"\n")
	conf := secretConfig(t, u.Host, keyFile)
	plugins := egressPlugins(t)
	srv := startServerEnv(t, []string{"TOOLHOST_E2E_API_TOKEN=" + envSecret}, plugins,
		"--config", conf, "--token-file", boundsTokens(t), "--operator", "ops", "--audit-args")
	_, opsLines := openEvents(t, srv.url, opsToken, "")
	_, aliceLines := openEvents(t, srv.url, aliceToken, "")

	var said []string // everything the server answered
	call := func(token, args string) (string, string, int) {
		out, errOut, code := srv.cliEnv(t, []string{"TOOLHOST_TOKEN=" + token}, "call", "egress.fetch", args)
		said = append(said, out, errOut)
		return out, errOut, code
	}
	if out, errOut, code := call(aliceToken, `{"url":"`+up.URL+`/check"}`); code != 0 || !strings.Contains(out, "headers arrived") {
		t.Fatalf("alice's call: exit %d, %q %q", code, out, errOut)
	}
	if arrived.Load() != 1 {
		t.Fatalf("the upstream saw the headers %d times", arrived.Load())
	}
	if _, errOut, code := call(aliceToken, `{"url":"`+up.URL+`/away"}`); code == 0 || !strings.Contains(errOut, `"kind"`) {
		t.Errorf("a redirect off the grant: exit %d, %q", code, errOut)
	}
	if _, errOut, code := call(aliceToken, `{"url":"http://127.0.0.1:1/x","headers":{"Authorization":"guest-set"}}`); code == 0 {
		t.Errorf("a host off the grant: exit %d, %q", code, errOut)
	}
	// Access: bob may call nothing, and is told the tool does not exist.
	if _, errOut, code := call(bobToken, `{"url":"`+up.URL+`/check"}`); code == 0 || !strings.Contains(errOut, `"kind":"not_found"`) ||
		!strings.Contains(errOut, `no tool named \"egress.fetch\"`) {
		t.Errorf("bob's call: exit %d, %q", code, errOut)
	}
	out, errOut, code := srv.cliEnv(t, []string{"TOOLHOST_TOKEN=" + bobToken}, "list", "--json")
	if code != 0 || strings.Contains(out, "egress") {
		t.Errorf("bob's list: exit %d, %q %q", code, out, errOut)
	}
	said = append(said, out)
	if out, _, _ := srv.cliEnv(t, []string{"TOOLHOST_TOKEN=" + aliceToken}, "list", "--json"); !strings.Contains(out, "egress") {
		t.Errorf("alice's list lacks egress.fetch: %q", out)
	}

	isLast := func(raw string) bool {
		return strings.Contains(raw, `"type":"dispatch.result"`) && strings.Contains(raw, `"caller":"bob"`)
	}
	said = append(said, until(t, opsLines, isLast, nil)...)
	results := 0
	said = append(said, until(t, aliceLines, func(raw string) bool {
		if strings.Contains(raw, `"type":"dispatch.result"`) {
			results++
		}
		return results == 3 // alice's three calls
	}, nil)...)

	req, _ := http.NewRequest(http.MethodGet, strings.TrimSuffix(srv.url, "/mcp")+"/metrics", nil)
	req.Header.Set("Authorization", "Bearer "+opsToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	metrics, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(metrics), "toolhost_") {
		t.Fatalf("/metrics: %s", metrics)
	}
	said = append(said, string(metrics))
	out, errOut, _ = runBinary(t, nil, "inspect", filepath.Join(plugins, "egress.wasm"))
	said = append(said, out, errOut)

	srv.stop(t)
	log := srv.stderr.String()
	said = append(said, log)
	for _, s := range said {
		for _, secret := range []string{"env-secret-7d2e4b", fileSecret, literal} {
			if strings.Contains(s, secret) {
				t.Errorf("a secret leaked:\n%s", s)
			}
		}
	}
	if !strings.Contains(log, `"msg":"the config holds a secret as a literal`) ||
		!strings.Contains(log, `"key":"grants.\"egress.wasm\".headers.\"`+u.Host+`\".X-Literal"`) {
		t.Errorf("no warning naming the literal secret's key:\n%s", log)
	}
	if !strings.Contains(log, `"outcome":"denied","attempts":0`) || !strings.Contains(log, `"access_rule":3,"access_line":21`) {
		t.Errorf("bob's call is not audited as denied by rule 3 (line 21):\n%s", log)
	}
	if !strings.Contains(log, `"msg":"an [[access]] rule names tools no module serves`) || !strings.Contains(log, `"rule":2,"line":16,"tools":"egress.fetc"`) {
		t.Errorf("no warning about the misspelt tool of rule 2:\n%s", log)
	}
}

// A missing secret refuses start-up, naming its key and never a value.
func TestE2EMissingSecretRefusesStart(t *testing.T) {
	conf := secretConfig(t, "127.0.0.1:9", "/nonexistent/secret-key")
	_, errOut, code := runBinary(t, []string{"TOOLHOST_E2E_API_TOKEN=Bearer x"}, "serve", "--addr", "127.0.0.1:0",
		"--plugins", t.TempDir(), "--config", conf)
	want := conf + `:8: grants."egress.wasm".headers."127.0.0.1:9".X-Key: cannot read secret file /nonexistent/secret-key: no such file or directory`
	if code == 0 || !strings.Contains(errOut, want) {
		t.Errorf("exit %d, stderr %q; want it to name the key: %s", code, errOut, want)
	}
	_, errOut, code = runBinary(t, nil, "serve", "--addr", "127.0.0.1:0", "--plugins", t.TempDir(),
		"--config", secretConfig(t, "127.0.0.1:9", writeFile(t, "k", "v")))
	if code == 0 || !strings.Contains(errOut, `.Authorization: environment variable TOOLHOST_E2E_API_TOKEN is not set`) {
		t.Errorf("unset variable: exit %d, stderr %q", code, errOut)
	}
}

func TestE2EAccessCheck(t *testing.T) {
	conf := writeFile(t, "access.toml", `# who may call what
[[access]]
identities = ["support-*"]
tools = ["billing.*"]
action = "deny"

[[access]]
scopes = ["tools:billing"]
tools = ["billing.*"]
action = "allow"

[[access]]
identities = ["support-*"]
tools = ["*"]
action = "allow"

[[access]]
identities = ["support-*"]
resources = ["notes://*"]
prompts = ["review"]
action = "allow"
`)
	for _, c := range []struct {
		args []string
		out  string
		code int
	}{
		{[]string{"support-ann", "billing.refund"}, `denied by rule 1 (line 2): identities = ["support-*"], tools = ["billing.*"], action = "deny"`, 1},
		{[]string{"support-ann", "text.count"}, `allowed by rule 3 (line 12): identities = ["support-*"], tools = ["*"], action = "allow"`, 0},
		{[]string{"carol", "billing.refund", "--scope", "x", "--scope", "tools:billing"}, `allowed by rule 2 (line 7): scopes = ["tools:billing"], tools = ["billing.*"], action = "allow"`, 0},
		{[]string{"carol", "billing.refund"}, `denied: no access rule matches, and with rules present an unmatched call is denied`, 1},
		{[]string{"support-ann", "notes://todo", "--resource"}, `allowed by rule 4 (line 17): identities = ["support-*"], resources = ["notes://*"], prompts = ["review"], action = "allow"`, 0},
		{[]string{"support-ann", "file:///etc/passwd", "--resource"}, `denied: no access rule matches, and with rules present an unmatched call is denied`, 1},
		{[]string{"support-ann", "review", "--prompt"}, `allowed by rule 4 (line 17): identities = ["support-*"], resources = ["notes://*"], prompts = ["review"], action = "allow"`, 0},
	} {
		out, errOut, code := runBinary(t, nil, append([]string{"access", "check", "--config", conf}, c.args...)...)
		if code != c.code || strings.TrimSpace(out) != c.out {
			t.Errorf("access check %v: exit %d, %q %q; want exit %d, %q", c.args, code, out, errOut, c.code, c.out)
		}
	}
	if out, _, code := runBinary(t, nil, "access", "check", "anyone", "any.tool"); code != 0 || !strings.HasPrefix(out, "allowed: there are no access rules") {
		t.Errorf("without a config: exit %d, %q", code, out)
	}
	bad := writeFile(t, "bad.toml", "[[access]]\nidentities = [\"*\"]\ntools = [\"*\"]\naction = \"deny\"\nactoin = \"deny\"\n")
	_, errOut, code := runBinary(t, nil, "access", "check", "--config", bad, "a", "b")
	if code != 2 || !strings.Contains(errOut, bad+`:5: access rule 1: actoin: unknown key "actoin" in an [[access]] rule; did you mean "action"?`) {
		t.Errorf("bad config: exit %d, %q", code, errOut)
	}
}
