package main

import (
	"strings"
	"testing"
)

// An --operator name with a control character is a start-up error naming
// the flag: identities are printable text (issue 20).
func TestOperatorWithControlCharacterRefused(t *testing.T) {
	var stdout, stderr strings.Builder
	code := doMain([]string{"serve", "--plugins", t.TempDir(), "--cache-dir", "off", "--addr", "127.0.0.1:0",
		"--operator", "ops\x1b[2J"}, strings.NewReader(""), &stdout, &stderr)
	if code != 2 || !strings.Contains(stderr.String(), "--operator: identity") || strings.Contains(stderr.String(), "\x1b") {
		t.Fatalf("exit %d, stderr %q; want 2 and an error naming --operator, escaped", code, stderr.String())
	}
}
