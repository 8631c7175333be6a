package config

import (
	"io"
	"slices"
	"strings"
	"testing"
)

func TestRegistriesSection(t *testing.T) {
	blocks := configDocExamples(t, "registries")
	if len(blocks) != 1 {
		t.Fatalf("%d registries examples in docs/CONFIG.md, want 1", len(blocks))
	}
	c, err := Parse("doc.toml", blocks[0][1])
	if err != nil {
		t.Fatal(err)
	}
	ghcr, lan := c.Registries["ghcr.io"], c.Registries["registry.lan:5000"]
	if ghcr.Username != "acme-bot" || ghcr.Password.Source() != SecretEnv || ghcr.Password.Ref() != "GHCR_TOKEN" || ghcr.Insecure {
		t.Errorf("ghcr.io: %+v", ghcr)
	}
	if lan.Token.Source() != SecretFile || !lan.Insecure || lan.Username != "" {
		t.Errorf("registry.lan:5000: %+v", lan)
	}
	if got := c.InsecureRegistries(); !slices.Equal(got, []string{"registry.lan:5000"}) {
		t.Errorf("InsecureRegistries = %v", got)
	}
	env := map[string]string{"GHCR_TOKEN": "ghp_x"}
	err = c.resolveSecrets(func(k string) (string, bool) { v, ok := env[k]; return v, ok },
		func(string) (io.ReadCloser, error) { return io.NopCloser(strings.NewReader("tok\n")), nil })
	if err != nil || c.Registries["ghcr.io"].Password.Value() != "ghp_x" || c.Registries["registry.lan:5000"].Token.Value() != "tok" {
		t.Fatalf("resolved: %v %+v", err, c.Registries)
	}
	for src, want := range map[string]string{
		`[registries."https://ghcr.io"]` + "\nusername = \"a\"\npassword = \"b\"":        "not a registry host",
		`[registries."ghcr.io/acme"]` + "\ninsecure = true":                              "not a registry host",
		`[registries."ghcr.io"]` + "\nusername = \"a\"":                                  "go together",
		`[registries."ghcr.io"]` + "\ntoken = \"t\"\nusername = \"a\"\npassword = \"b\"": "either token",
		`[registries."ghcr.io"]` + "\ninsecure = \"yes\"":                                "true or false",
		`[registries."ghcr.io"]` + "\npasswd = \"b\"":                                    "passwd",
		"[registries]\nghcr = 1":                                                         "ghcr",
	} {
		if _, err := Parse("t.toml", []byte(src)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want an error containing %q", src, err, want)
		}
	}
}
