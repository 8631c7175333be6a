package abi_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestCReader builds abi/c/reader_test.c natively with the host's clang
// (AddressSanitizer and UBSan on, so that a read past the end of the
// arguments or undefined behaviour fails the run) and runs it: the C
// SDK's JSON reader against escapes, surrogate pairs, the nesting bound,
// truncated input, bad numbers, trailing data, duplicate keys and
// invalid UTF-8. Without clang it skips, except in CI.
func TestCReader(t *testing.T) {
	clang, err := exec.LookPath("clang")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("clang not found (.ci/run installs it)")
		}
		t.Skip("clang not found; install clang (Debian) to run the C reader's tests")
	}
	bin := filepath.Join(t.TempDir(), "reader_test")
	args := []string{"-std=c11", "-g", "-O1", "-Wall", "-Wextra", "-Werror",
		// The wasm import and export attributes mean nothing natively.
		"-Wno-unknown-attributes", "-Wno-ignored-attributes",
		"-I", "c", "-o", bin, filepath.Join("c", "reader_test.c")}
	sanitized := append([]string{"-fsanitize=address,undefined", "-fno-sanitize-recover=all"}, args...)
	if out, err := exec.Command(clang, sanitized...).CombinedOutput(); err != nil {
		// A clang without the sanitizer runtimes still runs the checks.
		t.Logf("clang with sanitizers: %v\n%s\nbuilding without them", err, out)
		if out, err := exec.Command(clang, args...).CombinedOutput(); err != nil {
			t.Fatalf("clang: %v\n%s", err, out)
		}
	}
	cmd := exec.Command(bin)
	// The test keeps its inputs to the end on purpose.
	cmd.Env = append(os.Environ(), "ASAN_OPTIONS=detect_leaks=0")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("reader_test: %v\n%s", err, out)
	}
	// "ok N": every check ran (a program that returned early would print
	// fewer).
	last := strings.TrimSpace(string(out))
	n, err := strconv.Atoi(strings.TrimPrefix(last, "ok "))
	if !strings.HasPrefix(last, "ok ") || err != nil || n < 250 {
		t.Fatalf("reader_test printed %q, want \"ok N\" with N >= 250", last)
	}
}
