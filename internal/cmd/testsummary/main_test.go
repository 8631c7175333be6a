package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A real go test run over a module of its own with a passing, a skipping
// and a failing test: go test's closing lines and the failure's log stay,
// -v's chatter goes, the skip is summarised with its reason, and the exit
// code is go test's.
func TestRunSummarisesSkips(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("go.mod", "module example.com/sample\n\ngo 1.26\n")
	write("sample_test.go", `package sample

import "testing"

func TestPasses(t *testing.T) { t.Log("quiet when it passes") }
func TestSkips(t *testing.T)  { t.Skip("wat2wasm not found: install wabt") }
func TestFails(t *testing.T)  { t.Error("the failure's own words") }
func TestSub(t *testing.T) {
	t.Run("inner", func(t *testing.T) { t.Skipf("redis-server not found") })
}
`)
	var out, errOut bytes.Buffer
	t.Chdir(dir)
	code := run([]string{"go", "test", "-count=1", "."}, &out, &errOut)
	got := out.String()
	if code != 1 {
		t.Errorf("exit code %d, want go test's 1\nstdout:\n%s\nstderr:\n%s", code, got, errOut.String())
	}
	for _, want := range []string{
		"--- FAIL: TestFails", "the failure's own words", "FAIL\texample.com/sample",
		"skipped: 2 tests", "wat2wasm not found: install wabt", "(sample.TestSkips)",
		"redis-server not found", "(sample.TestSub/inner)",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
	for _, unwanted := range []string{"=== RUN", "--- PASS", "quiet when it passes"} {
		if strings.Contains(got, unwanted) {
			t.Errorf("output has %q:\n%s", unwanted, got)
		}
	}
}

// A clean run says so and exits 0.
func TestRunAllPass(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module example.com/ok\n\ngo 1.26\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "ok_test.go"), []byte("package ok\n\nimport \"testing\"\n\nfunc TestOK(t *testing.T) {}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	var out, errOut bytes.Buffer
	if code := run([]string{"go", "test", "-count=1", "."}, &out, &errOut); code != 0 {
		t.Fatalf("exit %d:\n%s\n%s", code, out.String(), errOut.String())
	}
	if got := out.String(); !strings.HasPrefix(got, "ok  \texample.com/ok") || !strings.HasSuffix(got, "skipped: none\n") {
		t.Fatalf("output:\n%s", got)
	}
}
