package config

import (
	"slices"
	"strings"
	"testing"
)

func TestTrustSection(t *testing.T) {
	blocks := configDocExamples(t, "trust")
	if len(blocks) != 1 {
		t.Fatalf("%d trust examples in docs/CONFIG.md, want 1", len(blocks))
	}
	c, err := Parse("doc.toml", blocks[0][1])
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"keys/acme.pub", "/etc/toolhost/release.pub"}; !slices.Equal(c.Trust.Keys, want) {
		t.Errorf("keys %v, want %v", c.Trust.Keys, want)
	}
	if !c.RequiresSigned() {
		t.Errorf("require %q, want signed", c.Trust.Require)
	}
	if c, err := Parse("t.toml", []byte("[trust]\nrequire = \"any\"")); err != nil || c.RequiresSigned() {
		t.Errorf(`require = "any": %v, requires signed %v`, err, c.RequiresSigned())
	}
	for src, want := range map[string]string{
		"[trust]\nkeys = \"a.pub\"":    "must be a list of public key files",
		"[trust]\nkeys = [1]":          "must be a list of public key files",
		"[trust]\nkeys = [\"\"]":       "empty file name",
		"[trust]\nroots = [\"a.pub\"]": "roots",
		"[trust]\nrequire = \"yes\"":   `must be "any"`,
		"[trust]\nrequire = true":      `must be "any"`,
	} {
		if _, err := Parse("t.toml", []byte(src)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want an error containing %q", src, err, want)
		}
	}
}
