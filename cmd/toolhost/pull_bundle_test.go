package main

import (
	"fmt"
	"io"
	"log"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/registry"
	"github.com/toolhost/toolhost/internal/oci"
	"github.com/toolhost/toolhost/internal/testkit/sigstoretest"
	"github.com/toolhost/toolhost/internal/testkit/testwasm"
)

// TestPullKeylessBundle pulls modules signed keyless (a VirtualSigstore
// bundle attached as cosign v3 attaches it, found here through the
// referrers tag: the in-process registry runs without the referrers API)
// with the identity and trusted root from the config file or the flags,
// records the signer in the lock, and refuses an identity that a
// [trust.registries] rule does not name.
func TestPullKeylessBundle(t *testing.T) {
	t.Setenv("DOCKER_CONFIG", t.TempDir())
	srv := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	defer srv.Close()
	host := strings.TrimPrefix(srv.URL, "http://")
	const issuer = "https://token.actions.githubusercontent.com"
	const subject = "https://github.com/acme/echo/.github/workflows/release.yml@refs/tags/v1"

	vs := sigstoretest.New(t)
	cfgDir := t.TempDir()
	if err := os.WriteFile(filepath.Join(cfgDir, "trusted_root.json"), vs.TrustedRoot(t), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(cfgDir, "toolhost.toml")
	if err := os.WriteFile(cfg, fmt.Appendf(nil, `
[trust]
trusted_root = "trusted_root.json"
identities = [{issuer = %q, subject = %q}]

[trust.registries."%s/vendor/*"]
identities = [{issuer = %q, subject_regexp = '^https://github\.com/vendor/'}]
`, issuer, subject, host, issuer), 0o644); err != nil {
		t.Fatal(err)
	}

	echo := testwasm.WAT(t, "host/testdata/wat/echo.wat")
	push := func(repo string) string {
		t.Helper()
		out, errs, code := runCLI(t, "push", echo, "oci://"+host+"/"+repo+":v1")
		if code != 0 {
			t.Fatalf("push %s: %d %s", repo, code, errs)
		}
		pinned := strings.TrimSpace(out)
		_, digest, _ := strings.Cut(pinned, "@")
		sigstoretest.Attach(t, host+"/"+repo+"@"+digest, vs.Keyless(t, issuer, subject,
			sigstoretest.Statement(digest, sigstoretest.SignPredicate), time.Now().Add(5*time.Minute), true))
		return pinned
	}
	pinned := push("acme/echo")
	push("vendor/echo") // signed by acme, whom the vendor rule does not trust

	dir := filepath.Join(t.TempDir(), "plugins")
	if _, errs, code := runCLI(t, "pull", "--config", cfg, "--plugins", dir, "oci://"+host+"/acme/echo:v1"); code != 0 {
		t.Fatalf("keyless pull: %d %s", code, errs)
	}
	lock, err := oci.ReadLock(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(lock.Modules) != 1 {
		t.Fatalf("lock %+v", lock.Modules)
	}
	if m := lock.Modules[0]; m.Signer != subject || m.Issuer != issuer || m.Signature != oci.FormBundle || m.Reference != "oci://"+host+"/acme/echo:v1" ||
		!strings.HasSuffix(pinned, m.Digest) {
		t.Errorf("lock entry %+v", m)
	}
	if err := lock.Signed("echo.wasm", strings.TrimPrefix(lock.Modules[0].ModuleDigest, "sha256:")); err != nil {
		t.Errorf("the lock does not vouch for the keyless pull: %v", err)
	}

	other := filepath.Join(t.TempDir(), "plugins")
	_, errs, code := runCLI(t, "pull", "--config", cfg, "--plugins", other, "oci://"+host+"/vendor/echo:v1")
	if code == 0 || !strings.Contains(errs, "no signature by a trusted signer") || !strings.Contains(errs, "/vendor/*") {
		t.Fatalf("pull against the vendor rule: %d %q, want a wrong-signer refusal naming the rule", code, errs)
	}
	if _, err := os.Stat(filepath.Join(other, "echo.wasm")); err == nil {
		t.Fatal("a refused pull wrote the module")
	}

	// The same with cosign's flags and no config file.
	root := filepath.Join(cfgDir, "trusted_root.json")
	for _, tc := range []struct {
		regexp string
		ok     bool
	}{{`^https://github\.com/acme/`, true}, {`^https://github\.com/evil/`, false}} {
		_, errs, code := runCLI(t, "pull", "--plugins", t.TempDir(), "--trusted-root", root,
			"--certificate-oidc-issuer", issuer, "--certificate-identity-regexp", tc.regexp, "oci://"+host+"/acme/echo:v1")
		if (code == 0) != tc.ok {
			t.Errorf("--certificate-identity-regexp %s: %d %q", tc.regexp, code, errs)
		}
	}
	_, errs, code = runCLI(t, "pull", "--plugins", t.TempDir(), "--certificate-oidc-issuer", issuer, "--certificate-identity", subject, "oci://"+host+"/acme/echo:v1")
	if code == 0 || !strings.Contains(errs, "--trusted-root") {
		t.Errorf("identity without a trusted root: %d %q", code, errs)
	}
}

// Concurrent toolhost pulls into one folder (separate processes) keep
// every lock entry: each rewrites the lock under the folder's flock.
func TestConcurrentPullsKeepLockEntries(t *testing.T) {
	t.Setenv("DOCKER_CONFIG", t.TempDir())
	srv := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	defer srv.Close()
	host := strings.TrimPrefix(srv.URL, "http://")
	echo := testwasm.WAT(t, "host/testdata/wat/echo.wat")
	const n = 4
	for i := range n {
		if _, errs, code := runCLI(t, "push", echo, fmt.Sprintf("oci://%s/acme/m%d:v1", host, i)); code != 0 {
			t.Fatalf("push: %d %s", code, errs)
		}
	}
	dir := filepath.Join(t.TempDir(), "plugins")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	type result struct {
		errs string
		code int
	}
	done := make(chan result, n)
	for i := range n {
		go func() {
			_, errs, code := runCLI(t, "pull", "--plugins", dir, "--insecure-skip-verify", fmt.Sprintf("oci://%s/acme/m%d:v1", host, i))
			done <- result{errs, code}
		}()
	}
	for range n {
		if r := <-done; r.code != 0 {
			t.Fatalf("pull: %d %s", r.code, r.errs)
		}
	}
	lock, err := oci.ReadLock(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(lock.Modules) != n {
		t.Fatalf("the lock holds %d entries after %d concurrent pulls: %+v", len(lock.Modules), n, lock.Modules)
	}
}
