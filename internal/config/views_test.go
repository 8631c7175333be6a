package config

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestViews(t *testing.T) {
	src := `
[tools."text.count"]
name = "count_words"
description = "Counts the words of a text."

[tools."db.write"]
expose = false
timeout = "5s"

[tools]
"gh.search" = { name = "search_code" }

[modules."github.wasm"]
prefix = "gh_"

[modules."gitlab.wasm"]
prefix = "gl-"
`
	c, err := Parse("toolhost.toml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	o := c.Tools
	if got := o["text.count"].View; got.Name != "count_words" || got.Description != "Counts the words of a text." || got.Expose != nil {
		t.Errorf("text.count view = %+v", got)
	}
	if got := o["db.write"]; got.View.Expose == nil || *got.View.Expose || got.View.Name != "" || got.Timeout == 0 {
		t.Errorf("db.write tool = %+v", got)
	}
	if got := o["gh.search"].View.Name; got != "search_code" {
		t.Errorf("gh.search wire name = %q", got)
	}
	p := c.Prefixes()
	if len(p) != 2 || p["github.wasm"] != "gh_" || p["gitlab.wasm"] != "gl-" {
		t.Errorf("Prefixes() = %v", p)
	}
	var nilConf *Config
	if nilConf.Prefixes() != nil {
		t.Error("nil Config has prefixes")
	}
}

func TestViewErrors(t *testing.T) {
	tests := []struct {
		name   string
		src    string
		line   int
		reason string
	}{
		{"expose string", "[tools.a]\nexpose = \"no\"\n", 2, `tools.a.expose: must be true or false, not the string "no"`},
		{"expose typo", "[tools.a]\nexpos = false\n", 2, `tools.a.expos: unknown key "expos" in [tools.a]; did you mean "expose"?`},
		{"name with dot", "[tools.\"text.count\"]\nname = \"text.count\"\n", 2,
			`tools."text.count".name: "text.count" is not a name every MCP client accepts: it must match ^[a-zA-Z0-9_-]{1,64}$ (try "text_count")`},
		{"name too long", "[tools.a]\nname = \"" + strings.Repeat("n", 65) + "\"\n", 2, `is not a name every MCP client accepts`},
		{"name empty", "[tools.a]\nname = \"\"\n", 2, `"" is not a name every MCP client accepts`},
		{"name not string", "[tools.a]\nname = 3\n", 2, `tools.a.name: must be a string (the tool's name on the wire), not the integer 3`},
		{"name reserved", "[tools.a]\nname = \"toolhost_plan\"\n", 2, `tools.a.name: "toolhost_plan" starts with "toolhost_", reserved`},
		{"name clash", "[tools.b]\nname = \"same\"\n\n[tools.a]\nname = \"same\"\n", 5,
			`tools.a.name: "same" is already the name of tool "b" (tools.b.name); two tools cannot share a wire name`},
		{"name clash inline", "[tools]\nz = { name = \"same\" }\na = { name = \"same\" }\n", 3, `tools.a.name: "same" is already the name of tool "z"`},
		{"description empty", "[tools.a]\ndescription = \"  \"\n", 2, `tools.a.description: must not be empty (leave the key out to keep the manifest's description)`},
		{"description not string", "[tools.a]\ndescription = true\n", 2, `tools.a.description: must be a string, not the boolean true`},
		{"module not wasm", "[modules.github]\nprefix = \"gh_\"\n", 1, `modules.github: "github" is not a module file name`},
		{"module path", "[modules.\"x/github.wasm\"]\n", 1, `is not a module file name`},
		{"module not table", "[modules]\n\"a.wasm\" = 1\n", 2, `modules."a.wasm": must be a table`},
		{"prefix typo", "[modules.\"a.wasm\"]\nprefx = \"a_\"\n", 2, `modules."a.wasm".prefx: unknown key "prefx" in [modules."a.wasm"]; did you mean "prefix"?`},
		{"prefix dot", "[modules.\"a.wasm\"]\nprefix = \"gh.\"\n", 2, `modules."a.wasm".prefix: "gh." is not a prefix every MCP client accepts: it must match ^[a-zA-Z0-9_-]{1,32}$`},
		{"prefix long", "[modules.\"a.wasm\"]\nprefix = \"" + strings.Repeat("p", 33) + "\"\n", 2, `is not a prefix every MCP client accepts`},
		{"prefix reserved", "[modules.\"a.wasm\"]\nprefix = \"toolhost_\"\n", 2, `reserved for toolhost's built-in tools`},
		{"modules not table", "modules = 1\n", 1, `modules: must be a table ([modules."MODULE.wasm"] sections), not the integer 1`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse("toolhost.toml", []byte(tt.src))
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("Parse error = %v, want an *Error", err)
			}
			if e.Line != tt.line || !strings.Contains(e.Reason, tt.reason) {
				t.Errorf("got  %d: %s\nwant %d: …%s…", e.Line, e.Reason, tt.line, tt.reason)
			}
		})
	}
}

// TestViewDocExamples keeps the tool view examples of docs/CONFIG.md
// valid; they are fenced as "toml views".
func TestViewDocExamples(t *testing.T) {
	blocks := configDocExamples(t, "views")
	if len(blocks) == 0 {
		t.Fatal("no tool view examples in docs/CONFIG.md")
	}
	for _, b := range blocks {
		c, err := Parse("CONFIG.md", b[1])
		if err != nil {
			t.Fatalf("%v\n%s", err, b[1])
		}
		if v := c.Tools["math.eval"].View; v.Name != "calc" {
			t.Errorf("math.eval view %+v", v)
		}
		if c.Prefixes()["github.wasm"] != "gh_" {
			t.Errorf("prefixes %v", c.Prefixes())
		}
	}
}

func TestExtismConfig(t *testing.T) {
	t.Setenv("TOOLHOST_TEST_PLUGIN_TOKEN", "s3cret")
	c, err := Parse("toolhost.toml", []byte(`
[modules."search.wasm".extism_config]
greeting = "hej"
token = {env = "TOOLHOST_TEST_PLUGIN_TOKEN"}
`))
	if err != nil {
		t.Fatal(err)
	}
	if err := c.ResolveSecrets(); err != nil {
		t.Fatal(err)
	}
	got := c.ExtismConfig()
	if len(got) != 1 || got["search.wasm"]["greeting"] != "hej" || got["search.wasm"]["token"] != "s3cret" {
		t.Errorf("ExtismConfig() = %v", got)
	}
	if _, err := Parse("toolhost.toml", []byte("[modules.\"search.wasm\"]\nextism_config = {greeting = 3}\n")); err == nil {
		t.Error("a number in extism_config was accepted")
	}
}

func TestExtismKeyring(t *testing.T) {
	t.Setenv("TOOLHOST_TEST_KEYRING", "k3y")
	file := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(file, []byte("from-file\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	// A plugin reads its keyring as bytes: a PEM key's line breaks stay
	// (a header's secret refuses them: TestSecretResolveErrors).
	const pem = "-----BEGIN PRIVATE KEY-----\nMC4CAQ\n-----END PRIVATE KEY-----"
	pemFile := filepath.Join(t.TempDir(), "key.pem")
	if err := os.WriteFile(pemFile, []byte(pem+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := Parse("toolhost.toml", []byte(`
[modules."context7.wasm".keyring."context7"]
api_key = {env = "TOOLHOST_TEST_KEYRING"}
"me@example.com" = {file = "`+file+`"}
signing_key = {file = "`+pemFile+`"}
`))
	if err != nil {
		t.Fatal(err)
	}
	if s := fmt.Sprint(c.Modules["context7.wasm"].Keyring); strings.Contains(s, "k3y") {
		t.Errorf("printing the keyring shows a secret: %s", s)
	}
	if err := c.ResolveSecrets(); err != nil {
		t.Fatal(err)
	}
	got := c.ExtismKeyring()
	want := map[string]map[string]map[string]string{"context7.wasm": {"context7": {"api_key": "k3y", "me@example.com": "from-file", "signing_key": pem}}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("ExtismKeyring() = %v, want %v", got, want)
	}
	for doc, wantErr := range map[string]string{
		`[modules."a.wasm".keyring.svc]` + "\nuser = \"literal\"\n":        `modules."a.wasm".keyring.svc.user: must be a reference {env = "NAME"}`,
		`[modules."a.wasm".keyring]` + "\nsvc = \"x\"\n":                   `modules."a.wasm".keyring.svc: must be a table`,
		`[modules."a.wasm".keyring.svc]` + "\nuser = {env = \"1BAD\"}\n":   "is not an environment variable name",
		`[modules."a.wasm".keyring.svc]` + "\nuser = {file = \"rel/x\"}\n": "is not an absolute path",
	} {
		_, err := Parse("toolhost.toml", []byte(doc))
		if err == nil || !strings.Contains(err.Error(), wantErr) {
			t.Errorf("%s: %v, want an error saying %q", doc, err, wantErr)
		}
	}
	// An unset variable is named at start-up, not when the plugin asks.
	c, err = Parse("toolhost.toml", []byte("[modules.\"a.wasm\".keyring.svc]\nuser = {env = \"TOOLHOST_TEST_KEYRING_UNSET\"}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if err := c.ResolveSecrets(); err == nil || !strings.Contains(err.Error(), "TOOLHOST_TEST_KEYRING_UNSET is not set") {
		t.Errorf("ResolveSecrets: %v, want the unset variable named", err)
	}
	if (*Config)(nil).ExtismKeyring() != nil {
		t.Error("a nil Config has a keyring")
	}
}
