package loader_test

import (
	"os"
	"testing"

	"github.com/toolhost/toolhost/host"
)

// TestMain makes the test binary the compiler child of the tests that
// compile under host.CompileLimits.
func TestMain(m *testing.M) {
	if os.Getenv(host.CompileChildEnv) == "1" {
		os.Exit(host.CompileChildMain(os.Stdin, os.Stderr))
	}
	os.Exit(m.Run())
}
