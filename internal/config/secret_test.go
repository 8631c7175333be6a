package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const secretGrant = `[grants."f.wasm"]
hosts = ["api.example.com", "b.example.com", "c.example.com"]

[grants."f.wasm".headers."api.example.com"]
Authorization = {env = "TOOLHOST_TEST_API_TOKEN"}

[grants."f.wasm".headers."b.example.com"]
X-Key = {file = "%s"}

[grants."f.wasm".headers."c.example.com"]
X-Plain = "literal-value"
`

func parseSecrets(t *testing.T, file string) *Config {
	t.Helper()
	c, err := Parse("s.toml", []byte(fmt.Sprintf(secretGrant, file)))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestSecretsResolved(t *testing.T) {
	file := filepath.Join(t.TempDir(), "key")
	if err := os.WriteFile(file, []byte("from-the-file\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("TOOLHOST_TEST_API_TOKEN", "Bearer from-the-env")
	c := parseSecrets(t, file)
	if v := c.EgressGrants()["f.wasm"].Headers["api.example.com"]["Authorization"]; v != "" {
		t.Fatalf("a reference has a value before ResolveSecrets: %q", v)
	}
	if err := c.ResolveSecrets(); err != nil {
		t.Fatal(err)
	}
	h := c.EgressGrants()["f.wasm"].Headers
	if h["api.example.com"]["Authorization"] != "Bearer from-the-env" || h["b.example.com"]["X-Key"] != "from-the-file" ||
		h["c.example.com"]["X-Plain"] != "literal-value" {
		t.Fatalf("resolved headers: %v", h)
	}
	lit := c.LiteralSecrets()
	if len(lit) != 1 || lit[0].Key() != `grants."f.wasm".headers."c.example.com".X-Plain` || lit[0].Line() != 11 {
		t.Fatalf("LiteralSecrets: %v", lit)
	}
}

func TestMissingSecretsRefused(t *testing.T) {
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty")
	if err := os.WriteFile(empty, []byte("\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	present := filepath.Join(dir, "present")
	if err := os.WriteFile(present, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	nul := filepath.Join(dir, "nul")
	if err := os.WriteFile(nul, []byte("a\x00b"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, env, file, want string
		unset                 bool
	}{
		{"unset env", "", present, `s.toml:5: grants."f.wasm".headers."api.example.com".Authorization: environment variable TOOLHOST_TEST_API_TOKEN is not set`, true},
		{"empty env", "", present, `s.toml:5: grants."f.wasm".headers."api.example.com".Authorization: environment variable TOOLHOST_TEST_API_TOKEN is empty`, false},
		{"missing file", "v", filepath.Join(dir, "nope"), `s.toml:8: grants."f.wasm".headers."b.example.com".X-Key: cannot read secret file ` + filepath.Join(dir, "nope") + `: no such file or directory`, false},
		{"empty file", "v", empty, `s.toml:8: grants."f.wasm".headers."b.example.com".X-Key: secret file ` + empty + ` is empty`, false},
		{"line break", "a\r\nInjected: 1", present, `s.toml:5: grants."f.wasm".headers."api.example.com".Authorization: the secret from env TOOLHOST_TEST_API_TOKEN holds a line break, which no header value may`, false},
		{"NUL", "v", nul, `s.toml:8: grants."f.wasm".headers."b.example.com".X-Key: the secret from file ` + nul + ` holds a NUL byte`, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Setenv("TOOLHOST_TEST_API_TOKEN", c.env)
			if c.unset {
				os.Unsetenv("TOOLHOST_TEST_API_TOKEN")
			}
			err := parseSecrets(t, c.file).ResolveSecrets()
			var ce *Error
			if !errors.As(err, &ce) || err.Error() != c.want {
				t.Fatalf("got %v\nwant %s", err, c.want)
			}
		})
	}
}

func TestSecretReferenceErrors(t *testing.T) {
	head := "[grants.\"f.wasm\"]\nhosts = [\"x.com\"]\n[grants.\"f.wasm\".headers.\"x.com\"]\n"
	for _, c := range []struct{ value, want string }{
		{`{enf = "X"}`, `s.toml:4: grants."f.wasm".headers."x.com".A.enf: unknown key "enf" in a secret reference; did you mean "env"?`},
		{`{env = "X", file = "/y"}`, `s.toml:4: grants."f.wasm".headers."x.com".A: a secret reference has exactly one key, env or file, as in {env = "API_TOKEN"}`},
		{`{env = "1X"}`, `s.toml:4: grants."f.wasm".headers."x.com".A.env: "1X" is not an environment variable name (letters, digits and _, not starting with a digit)`},
		{`{file = "secrets/x"}`, `s.toml:4: grants."f.wasm".headers."x.com".A.file: "secrets/x" is not an absolute path (the server's working directory is no place to look for secrets)`},
		{`{file = ""}`, `s.toml:4: grants."f.wasm".headers."x.com".A.file: must be a non-empty string, not the string ""`},
		{`5`, `s.toml:4: grants."f.wasm".headers."x.com".A: must be a string or a reference {env = "NAME"} or {file = "/run/secrets/NAME"}, not the integer 5`},
	} {
		_, err := Parse("s.toml", []byte(head+"A = "+c.value+"\n"))
		if err == nil || err.Error() != c.want {
			t.Errorf("A = %s:\n got %v\nwant %s", c.value, err, c.want)
		}
	}
}

// TestSecretRedacted prints a resolved Secret every way a program might
// (fmt verbs, JSON, slog, inside a struct) and never finds the value.
func TestSecretRedacted(t *testing.T) {
	t.Setenv("TOOLHOST_TEST_API_TOKEN", "s3cr3t-value")
	c := parseSecrets(t, "/nonexistent")
	s := c.Grants["f.wasm"].Headers["api.example.com"]["Authorization"]
	if err := s.resolve(os.LookupEnv, nil); err != nil {
		t.Fatal(err)
	}
	if s.Value() != "s3cr3t-value" {
		t.Fatal(s.Value())
	}
	var log bytes.Buffer
	slog.New(slog.NewJSONHandler(&log, nil)).Info("x", "secret", s, "grant", c.Grants["f.wasm"])
	slog.New(slog.NewTextHandler(&log, nil)).Info("x", "secret", s)
	j, _ := json.Marshal(map[string]any{"s": s, "grant": c.Grants["f.wasm"]})
	for _, out := range []string{
		fmt.Sprint(s), fmt.Sprintf("%v %+v %#v %s %q", s, s, s, s, s), fmt.Sprintf("%+v %#v", c.Grants, c.Grants),
		string(j), log.String(), fmt.Sprint(LiteralSecret("plain-value")),
	} {
		if strings.Contains(out, "s3cr3t") || strings.Contains(out, "plain-value") {
			t.Fatalf("the value leaked: %s", out)
		}
	}
	if got := s.String(); got != "[secret from env TOOLHOST_TEST_API_TOKEN]" {
		t.Fatal(got)
	}
	if got := LiteralSecret("x").String(); got != "[secret]" || LiteralSecret("x").Value() != "x" {
		t.Fatal(got)
	}
}
