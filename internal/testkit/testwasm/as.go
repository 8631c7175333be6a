package testwasm

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// AS builds an AssemblyScript example tool (dir relative to the repo root,
// "tools-src-as/textkit") with abi/assemblyscript's pinned compiler, as
// `make plugins-as` does, and returns the .wasm path. The compiler comes
// from abi/assemblyscript/node_modules, which `make plugins-as` (and so
// `make test`) installs with npm ci; without node or that install the test
// is skipped, except in CI (CI set), where it must be there.
func AS(t testing.TB, dir string) string {
	t.Helper()
	mu.Lock()
	defer mu.Unlock()
	if p, ok := built[dir]; ok {
		return p
	}
	root := Root(t)
	asc := filepath.Join(root, "abi", "assemblyscript", "node_modules", ".bin", "asc")
	missing := func(what string) {
		unavailable(t, "building "+dir+": "+what, "make test installs it with make plugins-as",
			"install Node.js and run make plugins-as to run this test")
	}
	if _, err := exec.LookPath("node"); err != nil {
		missing("node not found")
	}
	if _, err := os.Stat(asc); err != nil {
		missing("the AssemblyScript compiler is not installed in abi/assemblyscript/node_modules")
	}
	// Through a temporary name, as C and Rust do: test binaries of other
	// packages share outDir and may read the module while this one builds.
	out := filepath.Join(outDir(t), safeName(dir)+".wasm")
	tmp := fmt.Sprintf("%s.%d.tmp", out, os.Getpid())
	cmd := exec.Command(asc, "--config", "asconfig.json", "--target", "release", "-o", tmp)
	cmd.Dir = filepath.Join(root, dir)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("asc %s: %v\n%s", dir, err, b)
	}
	if err := os.Rename(tmp, out); err != nil {
		t.Fatal(err)
	}
	built[dir] = out
	return out
}
