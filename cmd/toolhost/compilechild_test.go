package main

import (
	"os"
	"testing"

	"github.com/toolhost/toolhost/host"
)

// TestMain makes the test binary the compiler child when in-process runs
// of serve or plan re-execute it (os.Executable) to compile modules.
func TestMain(m *testing.M) {
	if os.Getenv(host.CompileChildEnv) == "1" {
		os.Exit(host.CompileChildMain(os.Stdin, os.Stderr))
	}
	os.Exit(m.Run())
}
