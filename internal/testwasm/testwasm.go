// Package testwasm builds WebAssembly fixtures for tests on demand, so that
// `go test ./...` needs no prior make step: Go packages are built as WASI
// reactors with the go command (its build cache makes repeats cheap) and
// .wat files are assembled with wabt's wat2wasm.
package testwasm

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
)

var (
	mu    sync.Mutex
	built = map[string]string{}
)

// Root returns the repository root (the folder holding go.mod).
func Root(t testing.TB) string {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	return filepath.Clean(filepath.Join(filepath.Dir(file), "..", ".."))
}

// Go builds the Go package at pkg (a path relative to the repository root,
// like "./tools-src/text") as a reactor module and returns the .wasm path.
// Results are shared by every test in the process.
func Go(t testing.TB, pkg string) string {
	t.Helper()
	mu.Lock()
	defer mu.Unlock()
	if p, ok := built[pkg]; ok {
		return p
	}
	out := filepath.Join(outDir(t), safeName(pkg)+".wasm")
	tmp := fmt.Sprintf("%s.%d.tmp", out, os.Getpid())
	cmd := exec.Command("go", "build", "-buildmode=c-shared", "-o", tmp, pkg)
	cmd.Dir = Root(t)
	cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm", "CGO_ENABLED=0")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building %s for wasip1: %v\n%s", pkg, err, b)
	}
	// Test binaries of several packages build the same fixtures at once:
	// rename makes each arrival atomic.
	if err := os.Rename(tmp, out); err != nil {
		t.Fatal(err)
	}
	built[pkg] = out
	return out
}

// WAT assembles the WebAssembly text file at path (relative to the
// repository root) with wat2wasm and returns the .wasm path. wabt is a
// test dependency (.ci/run installs it); without it the test fails and says
// how to install it.
func WAT(t testing.TB, path string) string {
	t.Helper()
	mu.Lock()
	defer mu.Unlock()
	if p, ok := built[path]; ok {
		return p
	}
	tool, err := exec.LookPath("wat2wasm")
	if err != nil {
		t.Fatalf("wat2wasm not found: install wabt (apt-get install wabt) to build %s", path)
	}
	out := filepath.Join(outDir(t), safeName(path)+".wasm")
	tmp := fmt.Sprintf("%s.%d.tmp", out, os.Getpid())
	cmd := exec.Command(tool, "-o", tmp, path)
	cmd.Dir = Root(t)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("wat2wasm %s: %v\n%s", path, err, b)
	}
	if err := os.Rename(tmp, out); err != nil {
		t.Fatal(err)
	}
	built[path] = out
	return out
}

// Dir copies the given .wasm files into a fresh temporary folder, as a
// plugins folder for a test.
func Dir(t testing.TB, wasm ...string) string {
	t.Helper()
	dir := t.TempDir()
	for _, w := range wasm {
		b, err := os.ReadFile(w)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, filepath.Base(w)), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// outDir is one folder per repository checkout, so parallel test binaries
// share builds without clobbering another checkout's.
func outDir(t testing.TB) string {
	sum := sha256.Sum256([]byte(Root(t)))
	dir := filepath.Join(os.TempDir(), "toolhost-testwasm-"+hex.EncodeToString(sum[:6]))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

func safeName(p string) string {
	p = strings.TrimPrefix(filepath.ToSlash(p), "./")
	return strings.NewReplacer("/", "_", ".", "_").Replace(p)
}
