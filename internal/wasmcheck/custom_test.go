package wasmcheck

import (
	"bytes"
	"testing"
)

// A custom section is written, found, replaced (never doubled) and
// removed, leaving the rest of the module byte for byte.
func TestCustomSectionRoundTrip(t *testing.T) {
	mod := []byte("\x00asm\x01\x00\x00\x00\x01\x04\x01\x60\x00\x00") // one type section
	if _, ok, err := CustomSection(mod, "x.m"); ok || err != nil {
		t.Fatalf("no section: %v %v", ok, err)
	}
	one, err := WithCustomSection(mod, "x.m", []byte("first"))
	if err != nil {
		t.Fatal(err)
	}
	two, err := WithCustomSection(one, "x.m", []byte("second"))
	if err != nil {
		t.Fatal(err)
	}
	if got, ok, err := CustomSection(two, "x.m"); !ok || err != nil || string(got) != "second" {
		t.Fatalf("after replacing: %q %v %v", got, ok, err)
	}
	if _, err := Check(two); err != nil {
		t.Fatalf("the module stays valid: %v", err)
	}
	back, err := WithoutCustomSection(two, "x.m")
	if err != nil || !bytes.Equal(back, mod) {
		t.Fatalf("without: % x, %v", back, err)
	}
	doubled := append(append([]byte{}, one...), one[len(mod):]...)
	if _, _, err := CustomSection(doubled, "x.m"); err == nil {
		t.Fatal("two sections of one name: want an error")
	}
	if _, _, err := CustomSection(append(append([]byte{}, mod...), 0, 0x7f), "x.m"); err == nil {
		t.Fatal("a section running past the end: want an error")
	}
}
