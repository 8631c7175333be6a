package main

import (
	"bufio"
	"bytes"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/toolhost/toolhost/internal/oci"
	"github.com/toolhost/toolhost/internal/testkit/sigstoretest"
	"github.com/toolhost/toolhost/internal/testkit/testwasm"
	toolserver "github.com/toolhost/toolhost/server"
)

// startDockerRegistry runs Debian's docker-registry (the CNCF distribution
// registry, 2.8) on a loopback port with its storage in a temporary folder,
// and returns host:port. It is stopped when the test ends.
func startDockerRegistry(t *testing.T) string {
	t.Helper()
	bin, err := exec.LookPath("docker-registry")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("docker-registry is not installed (.ci/run installs it)")
		}
		t.Skip("docker-registry not installed: apt-get install docker-registry")
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	dir := t.TempDir()
	cfg := filepath.Join(dir, "config.yml")
	yml := "version: 0.1\nlog:\n  level: info\nstorage:\n  filesystem:\n    rootdirectory: " + filepath.Join(dir, "data") +
		"\nhttp:\n  addr: " + addr + "\n"
	if err := os.WriteFile(cfg, []byte(yml), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "serve", cfg)
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = pw, pw
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pw.Close()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	var logBuf bytes.Buffer
	ready := make(chan bool, 1)
	go func() {
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			logBuf.WriteString(sc.Text() + "\n")
			if strings.Contains(sc.Text(), "listening on") {
				ready <- true
			}
		}
		ready <- false
	}()
	select {
	case ok := <-ready:
		if !ok {
			t.Fatalf("docker-registry exited before listening:\n%s", logBuf.String())
		}
	case <-time.After(time.Minute):
		t.Fatal("docker-registry did not start listening within a minute")
	}
	return addr
}

// Push and pull through a real registry process: signed push, pull by
// tag with the key, pull by digest, re-pull from the lock.
func TestE2EDockerRegistry(t *testing.T) {
	t.Setenv("DOCKER_CONFIG", t.TempDir())
	repo := "oci://" + startDockerRegistry(t) + "/acme/echo"
	priv, pub := writeKeyPair(t, t.TempDir(), "cosign")
	echo := testwasm.WAT(t, "host/testdata/wat/echo.wat")
	out, errs, code := runCLI(t, "push", "--sign", priv, echo, repo+":v1")
	if code != 0 {
		t.Fatalf("push: %d %s", code, errs)
	}
	pinned := strings.TrimSpace(out)
	dir := filepath.Join(t.TempDir(), "plugins")
	want, _ := os.ReadFile(echo)
	for _, ref := range []string{repo + ":v1", pinned} {
		if _, errs, code := runCLI(t, "pull", "--plugins", dir, "--key", pub, ref); code != 0 {
			t.Fatalf("pull %s: %d %s", ref, code, errs)
		}
		assertFile(t, filepath.Join(dir, "echo.wasm"), want)
	}
	os.Remove(filepath.Join(dir, "echo.wasm"))
	if _, errs, code := runCLI(t, "pull", "--plugins", dir, "--key", pub); code != 0 {
		t.Fatalf("re-pull: %d %s", code, errs)
	}
	assertFile(t, filepath.Join(dir, "echo.wasm"), want)
	if _, errs, code := runCLI(t, "pull", "--plugins", dir, "--key", pub, repo+":nope"); code == 0 || !strings.Contains(errs, "not found") {
		t.Fatalf("unknown tag: %d %q", code, errs)
	}
}

// With [trust] require = "signed", serve loads only what the lock file
// records as verified: a hand-copied module is refused with the reason
// (status, list, the log); a signed pull from a real registry into the
// running server's folder hot-loads; an unverified pull is refused; a
// file changed after its pull is refused while the pulled version serves.
func TestE2ESignedOnly(t *testing.T) {
	t.Setenv("DOCKER_CONFIG", t.TempDir())
	reg := startDockerRegistry(t)
	priv, pub := writeKeyPair(t, t.TempDir(), "cosign")
	echo := testwasm.WAT(t, "host/testdata/wat/echo.wat")
	counter := testwasm.WAT(t, "host/testdata/wat/counter.wat")
	if _, errs, code := runCLI(t, "push", "--sign", priv, echo, "oci://"+reg+"/acme/echo:v1"); code != 0 {
		t.Fatalf("push: %d %s", code, errs)
	}
	if _, errs, code := runCLI(t, "push", counter, "oci://"+reg+"/acme/counter:v1"); code != 0 {
		t.Fatalf("push: %d %s", code, errs)
	}
	dir := t.TempDir()
	conf := filepath.Join(t.TempDir(), "toolhost.toml")
	if err := os.WriteFile(conf, []byte("[trust]\nrequire = \"signed\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(counter)
	if err := os.WriteFile(filepath.Join(dir, "byhand.wasm"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	s := startServer(t, dir, "--config", conf)
	if st, reason := stateOf(status(t, s), "byhand.wasm"); st != "refused" || !strings.Contains(reason, "not trusted") || !strings.Contains(reason, "no entry for it") {
		t.Fatalf("byhand.wasm: %q %q, want refused: not in the lock file", st, reason)
	}
	if out, _, code := s.cli(t, "list"); code != 0 || !strings.Contains(out, "byhand.wasm") || !strings.Contains(out, "not trusted") {
		t.Fatalf("toolhost list does not show the refusal:\n%s", out)
	}
	res, err := http.Get(strings.TrimSuffix(s.url, "/mcp") + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if !regexp.MustCompile(`byhand\.wasm: refused [0-9a-f]{64} \(not trusted: byhand\.wasm: the lock file has no entry`).Match(body) {
		t.Fatalf("/readyz does not give the refusal's reason:\n%s", body)
	}

	watch := s.watchTools(t)
	if _, errs, code := runCLI(t, "pull", "--plugins", dir, "--key", pub, "oci://"+reg+"/acme/echo:v1"); code != 0 {
		t.Fatalf("pull: %d %s", code, errs)
	}
	watch.await(t, "wat_echo", true, "a signed pull into the folder")
	if res := callTool(t, watch.ClientSession, "wat_echo", map[string]any{"x": 1}, nil); res.IsError {
		t.Fatalf("wat_echo: %+v", res)
	}

	if _, errs, code := runCLI(t, "pull", "--plugins", dir, "--insecure-skip-verify", "oci://"+reg+"/acme/counter:v1"); code != 0 {
		t.Fatalf("unverified pull: %d %s", code, errs)
	}
	pollStatus(t, s, "counter.wasm refused", func(r toolserver.StatusReport) bool {
		st, reason := stateOf(r, "counter.wasm")
		return st == "refused" && strings.Contains(reason, "without a verified signature")
	})

	// echo.wasm changed by hand after its pull: refused, the pulled bytes
	// keep serving.
	e, _ := os.ReadFile(echo)
	tmp := filepath.Join(dir, ".edit")
	if err := os.WriteFile(tmp, append(e, 0, 3, 1, 'x', 0), 0o644); err != nil { // an extra custom section
		t.Fatal(err)
	}
	if err := os.Rename(tmp, filepath.Join(dir, "echo.wasm")); err != nil {
		t.Fatal(err)
	}
	pollStatus(t, s, "the edited echo.wasm refused", func(r toolserver.StatusReport) bool {
		for _, f := range r.Modules {
			if strings.HasSuffix(f.Path, "echo.wasm") && f.State == "refused" && strings.Contains(f.Reason, "changed after the pull") {
				return true
			}
		}
		return false
	})
	if !watch.has(t, "wat_echo") {
		t.Fatal("the pulled echo.wasm stopped serving when its file was edited")
	}
	waitForLog(t, s.stderr, "plugin refused", "not trusted", 1) // the log comes through a pipe
}

// A keyless Sigstore bundle attached as cosign v3 attaches it, through a
// real registry process without the referrers API (distribution 2.8: the
// bundle is found through the sha256-HEX referrers tag), verifies on
// pull and is recorded in the lock as the certificate's identity.
func TestE2EDockerRegistryKeylessBundle(t *testing.T) {
	t.Setenv("DOCKER_CONFIG", t.TempDir())
	reg := startDockerRegistry(t)
	const issuer = "https://token.actions.githubusercontent.com"
	const subject = "https://github.com/acme/echo/.github/workflows/release.yml@refs/tags/v1"
	out, errs, code := runCLI(t, "push", testwasm.WAT(t, "host/testdata/wat/echo.wat"), "oci://"+reg+"/acme/echo:v1")
	if code != 0 {
		t.Fatalf("push: %d %s", code, errs)
	}
	_, digest, _ := strings.Cut(strings.TrimSpace(out), "@")
	vs := sigstoretest.New(t)
	sigstoretest.Attach(t, reg+"/acme/echo@"+digest,
		vs.Keyless(t, issuer, subject, sigstoretest.Statement(digest, sigstoretest.SignPredicate), time.Now().Add(5*time.Minute), true))
	root := filepath.Join(t.TempDir(), "trusted_root.json")
	if err := os.WriteFile(root, vs.TrustedRoot(t), 0o644); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "plugins")
	pull := func(identity string) (string, int) {
		_, errs, code := runCLI(t, "pull", "--plugins", dir, "--trusted-root", root, "--certificate-oidc-issuer", issuer,
			"--certificate-identity", identity, "oci://"+reg+"/acme/echo:v1")
		return errs, code
	}
	if errs, code := pull("https://github.com/evil/echo/.github/workflows/release.yml@refs/tags/v1"); code == 0 || !strings.Contains(errs, "not a trusted identity") {
		t.Fatalf("another identity: %d %q", code, errs)
	}
	if errs, code := pull(subject); code != 0 {
		t.Fatalf("keyless pull: %d %s", code, errs)
	}
	lock, err := oci.ReadLock(dir)
	if err != nil || len(lock.Modules) != 1 || lock.Modules[0].Signer != subject || lock.Modules[0].Issuer != issuer || lock.Modules[0].Digest != digest {
		t.Fatalf("lock: %v %+v", err, lock)
	}
}
