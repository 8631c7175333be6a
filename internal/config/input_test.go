package config

import (
	"io"
	"strings"
	"testing"
	"time"
)

// [input] takes state keys as secrets by reference, resolved in order,
// and a TTL; a key is never printed.
func TestInputSection(t *testing.T) {
	cfg, err := Parse("toolhost.toml", []byte(`[input]
state_keys = [{env = "INPUT_KEY"}, {file = "/run/secrets/old"}]
state_ttl = "5m"
`))
	if err != nil {
		t.Fatal(err)
	}
	env := func(name string) (string, bool) {
		return map[string]string{"INPUT_KEY": "new-key-0123456789abcdef0123456789"}[name], name == "INPUT_KEY"
	}
	open := func(string) (io.ReadCloser, error) {
		return io.NopCloser(strings.NewReader("old-key-0123456789abcdef0123456789\n")), nil
	}
	if err := cfg.resolveSecrets(env, open); err != nil {
		t.Fatal(err)
	}
	keys := cfg.InputKeys()
	if len(keys) != 2 || string(keys[0]) != "new-key-0123456789abcdef0123456789" || !strings.HasPrefix(string(keys[1]), "old-key-") {
		t.Fatalf("keys %q", keys)
	}
	if cfg.InputStateTTL() != 5*time.Minute {
		t.Errorf("ttl %v", cfg.InputStateTTL())
	}
	if s := cfg.Input.StateKeys[0].String(); strings.Contains(s, "new-key") {
		t.Errorf("a key printed as %q", s)
	}
	for _, b := range configDocExamples(t, "input") {
		if c, err := Parse("CONFIG.md", b[1]); err != nil || len(c.Input.StateKeys) != 2 {
			t.Errorf("docs/CONFIG.md's [input] example: %v", err)
		}
	}
	if _, err := Parse("toolhost.toml", []byte("[input]\nstate_keys = []\n")); err == nil {
		t.Error("an empty key list was accepted")
	}
}
