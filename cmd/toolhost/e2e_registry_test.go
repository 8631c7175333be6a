package main

import (
	"bufio"
	"bytes"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/toolhost/toolhost/internal/testkit/testwasm"
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
