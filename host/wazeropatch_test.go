package host_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestWazeroPatchApplied: the server runs the wazero of third_party/wazero,
// a renamed hard fork inside this module (host imports it by that path, so
// no build can get stock wazero instead), and that tree carries every change
// of third_party/wazero.patch (see third_party/README.md). It fails if the
// tree loses part of the patch, e.g. when it is refreshed from a new wazero
// release without re-applying it, and if go.mod grows a replace directive,
// which would make `go install github.com/toolhost/toolhost/cmd/toolhost@V`
// impossible (the go command refuses to install a module that has one).
func TestWazeroPatchApplied(t *testing.T) {
	gomod, err := os.ReadFile("../go.mod")
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.Lines(string(gomod)) {
		if f := strings.Fields(line); len(f) > 0 && f[0] == "replace" {
			t.Errorf("go.mod has %q: the server's module must have no replace directive", strings.TrimSpace(line))
		}
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
