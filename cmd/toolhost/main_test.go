package main

import (
	"bytes"
	"strings"
	"testing"
)

// doMainOut runs the CLI in process and returns stdout, stderr and the
// exit code.
func doMainOut(args ...string) (string, string, int) {
	var stdout, stderr bytes.Buffer
	code := doMain(args, strings.NewReader(""), &stdout, &stderr)
	return stdout.String(), stderr.String(), code
}

// --version prints exactly what the version subcommand prints; without a
// subcommand or flag the root still prints its help, and a stray word is
// still an unknown command.
func TestVersionFlag(t *testing.T) {
	defer func(v string) { version = v }(version)
	version = "v1.2.3-test"
	sub, _, code := doMainOut("version")
	if code != 0 || sub != "toolhost v1.2.3-test (guest ABI v1)\n" {
		t.Fatalf("toolhost version: exit %d, %q", code, sub)
	}
	flag, stderr, code := doMainOut("--version")
	if code != 0 || flag != sub || stderr != "" {
		t.Fatalf("toolhost --version: exit %d, stdout %q (want %q), stderr %q", code, flag, sub, stderr)
	}
	help, _, code := doMainOut()
	if code != 0 || !strings.Contains(help, "Available Commands:") || !strings.Contains(help, "--version") {
		t.Fatalf("toolhost: exit %d, want the help listing --version:\n%s", code, help)
	}
	_, stderr, code = doMainOut("frobnicate")
	if code == 0 || !strings.Contains(stderr, `unknown command "frobnicate"`) {
		t.Fatalf("toolhost frobnicate: exit %d, stderr %q", code, stderr)
	}
}
