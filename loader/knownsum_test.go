package loader

import (
	"crypto/sha256"
	"encoding/hex"
	"testing"
)

// TestKnownSum: the scan's hex sum is handed on as it is, and anything
// that is not a SHA-256 in hex is replaced by hashing the bytes, so a
// module is never loaded under a sum that is not its own.
func TestKnownSum(t *testing.T) {
	b := []byte("\x00asm\x01\x00\x00\x00")
	want := sha256.Sum256(b)
	if got := knownSum(hex.EncodeToString(want[:]), nil); got != want {
		t.Fatalf("the scan's sum was not handed on: %x", got)
	}
	for _, bad := range []string{"", "zz", hex.EncodeToString(want[:8])} {
		if got := knownSum(bad, b); got != want {
			t.Errorf("knownSum(%q) = %x, want the bytes' own sum", bad, got)
		}
	}
}
