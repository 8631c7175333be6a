package host_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestWazeroPatchApplied: the server runs the wazero of third_party/wazero,
// and that tree carries every change of third_party/wazero.patch (the inline
// termination check; see third_party/README.md). It fails if go.mod's
// replace is dropped or the vendored tree loses part of the patch, e.g. when
// it is refreshed from a new wazero release without re-applying it.
func TestWazeroPatchApplied(t *testing.T) {
	// Test binaries carry no module list in their build info, so go.mod
	// itself is read.
	gomod, err := os.ReadFile("../go.mod")
	if err != nil {
		t.Fatal(err)
	}
	const replace = "\nreplace github.com/tetratelabs/wazero => ./third_party/wazero\n"
	if !strings.Contains(string(gomod), replace) {
		t.Fatalf("go.mod lacks %q", strings.TrimSpace(replace))
	}

	git, err := exec.LookPath("git")
	if err != nil {
		t.Skip("git not installed")
	}
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(git, "apply", "--check", "--reverse", "third_party/wazero.patch")
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("third_party/wazero does not carry third_party/wazero.patch: %v\n%s", err, out)
	}
}
