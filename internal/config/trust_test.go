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
	if c.Trust.TrustedRoot != "trusted_root.json" || len(c.Trust.Identities) != 2 ||
		c.Trust.Identities[0].Issuer != "https://token.actions.githubusercontent.com" || !strings.HasPrefix(c.Trust.Identities[0].SubjectRegexp, "^https://github") ||
		c.Trust.Identities[1] != (Identity{Issuer: "https://accounts.google.com", Subject: "release@acme.example"}) {
		t.Errorf("trusted_root %q, identities %+v", c.Trust.TrustedRoot, c.Trust.Identities)
	}
	if r := c.Trust.Registries["ghcr.io/vendor/*"]; len(r.Identities) != 1 || len(r.Keys) != 0 {
		t.Errorf("vendor rule %+v", r)
	}
	if r := c.Trust.Registries["registry.lan:5000/tools/echo"]; len(r.Keys) != 1 || r.Keys[0] != "keys/echo.pub" {
		t.Errorf("echo rule %+v", r)
	}
	if c, err := Parse("t.toml", []byte("[trust]\nrequire = \"any\"")); err != nil || c.RequiresSigned() {
		t.Errorf(`require = "any": %v, requires signed %v`, err, c.RequiresSigned())
	}
	for src, want := range map[string]string{
		"[trust]\nkeys = \"a.pub\"":                                            "must be a list of public key files",
		"[trust]\nkeys = [1]":                                                  "must be a list of public key files",
		"[trust]\nkeys = [\"\"]":                                               "empty file name",
		"[trust]\nroots = [\"a.pub\"]":                                         "roots",
		"[trust]\nrequire = \"yes\"":                                           `must be "any"`,
		"[trust]\nrequire = true":                                              `must be "any"`,
		"[trust]\nidentities = [{issuer = \"i\", subject = \"s\"}]":            "set trusted_root",
		"[trust]\ntrusted_root = \"r.json\"\nidentities = [{subject = \"s\"}]": "needs issuer",
		"[trust]\ntrusted_root = \"r.json\"\nidentities = [{issuer = \"i\"}]":  "exactly one of subject",
		"[trust]\ntrusted_root = \"r.json\"\nidentities = [{issuer = \"i\", subject = \"s\", subject_regexp = \"x\"}]": "exactly one of subject",
		"[trust]\ntrusted_root = \"r.json\"\nidentities = [{issuer = \"i\", subject_regexp = \"(\"}]":                  "subject_regexp",
		"[trust]\ntrusted_root = \"r.json\"\nidentities = [{issuer = \"i\", sub = \"s\"}]":                             "unknown key",
		"[trust]\nidentities = \"x\"":                                                        "must be a list of tables",
		"[trust]\ntrusted_root = 1":                                                          "must be the file name",
		"[trust.registries.\"ghcr.io/acme/*\"]\n":                                            "names no signer",
		"[trust.registries.\"ghcr.io\"]\nkeys = [\"a.pub\"]":                                 "not a repository pattern",
		"[trust.registries.\"ghcr.io/a*\"]\nkeys = [\"a.pub\"]":                              "not a repository pattern",
		"[trust.registries.\"oci://ghcr.io/a\"]\nkeys = [\"a.pub\"]":                         "not a repository pattern",
		"[trust.registries.\"ghcr.io/a:v1\"]\nkeys = [\"a.pub\"]":                            "not a repository pattern",
		"[trust.registries.\"ghcr.io/a\"]\nkeys = [\"a.pub\"]\nkey = [\"a.pub\"]":            "unknown key",
		"[trust.registries.\"ghcr.io/a\"]\nidentities = [{issuer = \"i\", subject = \"s\"}]": "set trusted_root",
	} {
		if _, err := Parse("t.toml", []byte(src)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want an error containing %q", src, err, want)
		}
	}
}
