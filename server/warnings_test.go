package server

import (
	"log/slog"
	"strings"
	"testing"

	"github.com/toolhost/toolhost/internal/config"
	"github.com/toolhost/toolhost/transport"
)

// With [auth.oauth], an --operator or an [[access]] identity that names
// no static identity and has no "oauth:" is warned about: it was probably
// written for an OAuth subject, which is now oauth:SUBJECT.
func TestWarnBareOAuthNames(t *testing.T) {
	cfg, err := config.Parse("c.toml", []byte(`
[[access]]
identities = ["alice", "dana", "oauth:erin", "team-*"]
tools = ["*"]
action = "allow"
`))
	if err != nil {
		t.Fatal(err)
	}
	tokens, err := transport.ParseTokens("t", strings.NewReader("alice:"+strings.Repeat("a", 16)+"\n"))
	if err != nil {
		t.Fatal(err)
	}
	var logs strings.Builder
	warnBareOAuthNames(cfg, []string{"alice", "bob", "oauth:carol"}, tokens, slog.New(slog.NewTextHandler(&logs, nil)))
	got := logs.String()
	for _, want := range []string{"operator=bob oauth_form=oauth:bob", "identity=dana oauth_form=oauth:dana"} {
		if !strings.Contains(got, want) {
			t.Errorf("no warning %q in:\n%s", want, got)
		}
	}
	if n := strings.Count(got, "level=WARN"); n != 2 {
		t.Errorf("%d warnings, want 2 (bob and dana):\n%s", n, got)
	}
}
