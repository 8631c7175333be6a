package testwasm

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestFixturesMatchSources: every committed .wasm fixture is what
// wat2wasm makes of the .wat beside it, so a source edited without
// `make fixtures` cannot go unnoticed. Without wabt there is nothing to
// compare with: the committed binaries are then the fixtures.
func TestFixturesMatchSources(t *testing.T) {
	if _, err := exec.LookPath("wat2wasm"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("wat2wasm not found; .ci/run installs wabt so that CI checks the fixtures")
		}
		t.Skip("wat2wasm not found (apt-get install wabt): committed fixtures not checked against their sources")
	}
	root := Root(t)
	srcs, err := Sources(root)
	if err != nil {
		t.Fatal(err)
	}
	if len(srcs) < 20 {
		t.Fatalf("found %d .wat fixtures, expected the repository's 20 or more: %v", len(srcs), srcs)
	}
	dir := t.TempDir()
	for _, src := range srcs {
		want := filepath.Join(dir, filepath.Base(src)+".wasm")
		if err := Assemble(filepath.Join(root, src), want); err != nil {
			t.Fatal(err)
		}
		w, _ := os.ReadFile(want)
		committed := filepath.Join(root, strings.TrimSuffix(src, ".wat")+".wasm")
		got, err := os.ReadFile(committed)
		if err != nil {
			t.Errorf("%s: %v (run make fixtures and commit the result)", src, err)
			continue
		}
		if !bytes.Equal(got, w) {
			t.Errorf("%s does not match %s: run make fixtures and commit the result", committed, src)
		}
	}
}

// TestWATReturnsCommittedBinary: WAT finds the binary beside its source.
func TestWATReturnsCommittedBinary(t *testing.T) {
	p := WAT(t, "host/testdata/wat/echo.wat")
	if !strings.HasSuffix(p, filepath.FromSlash("host/testdata/wat/echo.wasm")) {
		t.Fatalf("WAT returned %s", p)
	}
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(b, []byte("\x00asm\x01\x00\x00\x00")) {
		t.Fatalf("%s is not a WebAssembly binary", p)
	}
}
