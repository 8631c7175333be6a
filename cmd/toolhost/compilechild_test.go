package main

import (
	"fmt"
	"os"
	"testing"

	"github.com/toolhost/toolhost/host"
)

// testCache is the compilation cache the servers and plans of this test
// binary share (--cache-dir), made for the run and removed after it. One
// kept from another build would hold describe entries without this
// build's compile marks, so a listed module's first calls would run on
// the interpreter (fresh instances only, about ten times slower) in one run
// and compiled in the next: what a test sees would hang on what ran before.
var testCache string

// TestMain makes the test binary the compiler child when in-process runs
// of serve or plan re-execute it (os.Executable) to compile modules, and
// otherwise runs the tests with their own cache.
func TestMain(m *testing.M) {
	if os.Getenv(host.CompileChildEnv) == "1" {
		os.Exit(host.CompileChildMain(os.Stdin, os.Stderr))
	}
	dir, err := os.MkdirTemp("", "toolhost-test-cache-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	testCache = dir
	cacheFlag = []string{"--cache-dir", dir}
	code := m.Run()
	_ = os.RemoveAll(dir)
	os.Exit(code)
}
