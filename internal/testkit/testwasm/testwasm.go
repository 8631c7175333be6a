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
	return filepath.Clean(filepath.Join(filepath.Dir(file), "..", "..", ".."))
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
	dir, rel := moduleOf(t, pkg)
	cmd := exec.Command("go", "build", "-buildmode=c-shared", "-o", tmp, rel)
	cmd.Dir = dir
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

// moduleOf returns the folder of the Go module that holds pkg (a path
// relative to the repository root) and pkg relative to that folder. Guests
// are not packages of the server's module: the examples (tools-src) and the
// test guests are modules of their own that build from the SDK's module,
// abi/guest, as a tool author's would.
func moduleOf(t testing.TB, pkg string) (dir, rel string) {
	t.Helper()
	root := Root(t)
	abs := filepath.Join(root, filepath.FromSlash(pkg))
	for dir = abs; ; dir = filepath.Dir(dir) {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			break
		}
		if dir == root || dir == filepath.Dir(dir) {
			t.Fatalf("testwasm.Go(%q): no go.mod above it", pkg)
		}
	}
	rel, err := filepath.Rel(dir, abs)
	if err != nil {
		t.Fatal(err)
	}
	return dir, "./" + filepath.ToSlash(rel)
}

// WAT returns the committed .wasm assembled from the WebAssembly text file
// at path (relative to the repository root): NAME.wat's binary is NAME.wasm
// beside it, so tests need no wabt. `make fixtures` reassembles them, and
// TestFixturesMatchSources checks that they match their sources wherever
// wat2wasm is installed.
func WAT(t testing.TB, path string) string {
	t.Helper()
	if !strings.HasSuffix(path, ".wat") {
		t.Fatalf("testwasm.WAT(%q): not a .wat file", path)
	}
	out := filepath.Join(Root(t), filepath.FromSlash(strings.TrimSuffix(path, ".wat")+".wasm"))
	if _, err := os.Stat(out); err != nil {
		t.Fatalf("fixture %s is missing: run `make fixtures` (needs wabt's wat2wasm) and commit it: %v", out, err)
	}
	return out
}

// Assemble runs wat2wasm on the .wat file at src, writing dst. It is what
// `make fixtures` and TestFixturesMatchSources use; tests that only need a
// fixture call WAT.
func Assemble(src, dst string) error {
	tool, err := exec.LookPath("wat2wasm")
	if err != nil {
		return err
	}
	if b, err := exec.Command(tool, "-o", dst, src).CombinedOutput(); err != nil {
		return fmt.Errorf("wat2wasm %s: %v\n%s", src, err, b)
	}
	return nil
}

// Sources lists the repository's .wat fixtures, relative to root.
func Sources(root string) ([]string, error) {
	var out []string
	for _, dir := range watDirs {
		m, err := filepath.Glob(filepath.Join(root, dir, "*.wat"))
		if err != nil {
			return nil, err
		}
		for _, p := range m {
			rel, _ := filepath.Rel(root, p)
			out = append(out, filepath.ToSlash(rel))
		}
	}
	return out, nil
}

// watDirs are the folders that hold .wat fixtures with committed binaries.
var watDirs = []string{"host/testdata/wat", "host/testdata/planner", "reliability/testdata/wat"}

// C builds the C tool module in dir (relative to the repository root, like
// "tools-src-c/wordfreq") with clang for wasm32-wasi, as `make plugins-c`
// does, and returns the .wasm path. Without clang or wasi-libc the test is
// skipped, except in CI (CI set), where .ci/run installs them.
func C(t testing.TB, dir string) string {
	t.Helper()
	mu.Lock()
	defer mu.Unlock()
	if p, ok := built[dir]; ok {
		return p
	}
	missing := func(what string) {
		unavailable(t, "building "+dir+": "+what,
			".ci/run installs clang, lld, wasi-libc and libclang-rt-dev-wasm32",
			"install clang, lld, wasi-libc and libclang-rt-dev-wasm32 (Debian) to run this test")
	}
	clang, err := exec.LookPath("clang")
	if err != nil {
		missing("clang not found")
	}
	root := Root(t)
	srcs, _ := filepath.Glob(filepath.Join(root, dir, "*.c"))
	if len(srcs) == 0 {
		t.Fatalf("no .c files in %s", dir)
	}
	out := filepath.Join(outDir(t), safeName(dir)+".wasm")
	tmp := fmt.Sprintf("%s.%d.tmp", out, os.Getpid())
	args := append([]string{"--target=wasm32-wasi", "-mexec-model=reactor", "-O2", "-Wall", "-Werror",
		"-I", filepath.Join(root, "abi", "c"), "-o", tmp}, srcs...)
	if b, err := exec.Command(clang, args...).CombinedOutput(); err != nil {
		if strings.Contains(string(b), "wasi") && (strings.Contains(string(b), "not found") || strings.Contains(string(b), "cannot find")) {
			missing("wasi-libc or the wasm32 runtime is missing: " + strings.TrimSpace(string(b)))
		}
		t.Fatalf("clang %s: %v\n%s", dir, err, b)
	}
	if err := os.Rename(tmp, out); err != nil {
		t.Fatal(err)
	}
	built[dir] = out
	return out
}

// Rust builds the Rust tool crate NAME of the tools-src-rust workspace
// (dir is "tools-src-rust/NAME") as `make plugins-rust` does: with the
// cargo and rustc that scripts/rust-toolchain.sh finds, offline, for
// wasm32-wasi or wasm32-wasip1. It returns the .wasm path. Without a
// complete toolchain the test is skipped, except in CI (CI set), where
// .ci/run installs Debian's.
func Rust(t testing.TB, dir string) string {
	t.Helper()
	mu.Lock()
	defer mu.Unlock()
	if p, ok := built[dir]; ok {
		return p
	}
	root := Root(t)
	tc := RustToolchain(t, dir)
	name := filepath.Base(dir)
	cmd := exec.Command(tc["CARGO"], "build", "--quiet", "--release", "--offline", "--target", tc["RUST_TARGET"], "-p", name)
	cmd.Dir = filepath.Join(root, "tools-src-rust")
	cmd.Env = append(os.Environ(), "RUSTC="+tc["RUSTC"])
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("cargo build %s: %v\n%s", dir, err, b)
	}
	b, err := os.ReadFile(filepath.Join(root, "tools-src-rust", "target", tc["RUST_TARGET"], "release", name+".wasm"))
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(outDir(t), safeName(dir)+".wasm")
	tmp := fmt.Sprintf("%s.%d.tmp", out, os.Getpid())
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, out); err != nil {
		t.Fatal(err)
	}
	built[dir] = out
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

// RustToolchain is the Rust toolchain scripts/rust-toolchain.sh finds
// (CARGO, RUSTC, RUSTDOC, RUST_TARGET), for building what; the test skips
// without one (fails under CI).
func RustToolchain(t testing.TB, what string) map[string]string {
	t.Helper()
	root := Root(t)
	var stderr strings.Builder
	find := exec.Command(filepath.Join(root, "scripts", "rust-toolchain.sh"))
	find.Stderr = &stderr
	line, err := find.Output()
	if err != nil {
		unavailable(t, "building "+what+": "+strings.TrimSpace(stderr.String()),
			".ci/run installs rustc, cargo, libstd-rust-dev-wasm32 and librust-serde-json-dev",
			"install rustc, cargo, libstd-rust-dev-wasm32 and librust-serde-json-dev (Debian) to run this test")
	}
	tc := map[string]string{}
	for _, kv := range strings.Fields(string(line)) {
		if k, v, ok := strings.Cut(kv, "="); ok {
			tc[k] = v
		}
	}
	return tc
}

// unavailable ends a test whose toolchain is missing (what): a skip that
// says how to install it (local), or, in CI (CI set), where .ci/run or
// make test installs it, a failure that says which does (ci).
func unavailable(t testing.TB, what, ci, local string) {
	t.Helper()
	if os.Getenv("CI") != "" {
		t.Fatalf("%s (%s)", what, ci)
	}
	t.Skipf("%s; %s", what, local)
}
