package access

import (
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestMatch(t *testing.T) {
	for _, c := range []struct {
		g, s string
		want bool
	}{
		{"*", "", true},
		{"*", "anything.at/all", true},
		{"text.*", "text.count", true},
		{"text.*", "text.", true},
		{"text.*", "textcount", false},
		{"text.*", "json.text.count", false},
		{"*.get", "json.get", true},
		{"*.get", "json.get.x", false},
		{"json.get", "json.get", true},
		{"json.get", "json.ge", false},
		{"json.get", "JSON.GET", false},
		{"?", "a", true},
		{"?", "é", true}, // one character, two bytes
		{"?", "", false},
		{"?", "ab", false},
		{"support-*", "support-alice", true},
		{"support-*", "support-", true},
		{"support-*", "billing-bob", false},
		{"a*b*c", "abc", true},
		{"a*b*c", "axxbyyc", true},
		{"a*b*c", "axxbyy", false},
		{"a*b*c", "acb", false},
		{"**", "x", true},
		{"a?c*", "abcdef", true},
		{"auth0|*", "auth0|1234", true}, // no special characters but * and ?
		{"[ab]", "a", false},            // no classes: literal brackets
		{"[ab]", "[ab]", true},
		{`a\*`, `a\xyz`, true}, // no escapes: a literal backslash, then a star
	} {
		if got := Match(c.g, c.s); got != c.want {
			t.Errorf("Match(%q, %q) = %v, want %v", c.g, c.s, got, c.want)
		}
	}
}

// reference turns a glob into the regexp it means.
func reference(g string) *regexp.Regexp {
	var b strings.Builder
	b.WriteString(`^(?s:`)
	for _, c := range g {
		switch c {
		case '*':
			b.WriteString(`.*`)
		case '?':
			b.WriteString(`.`)
		default:
			b.WriteString(regexp.QuoteMeta(string(c)))
		}
	}
	b.WriteString(`)$`)
	return regexp.MustCompile(b.String())
}

// FuzzMatch holds Match to a regexp reference on every valid input, and
// checks that neither Match nor the glob checks ever panic.
func FuzzMatch(f *testing.F) {
	for _, s := range [][2]string{{"text.*", "text.count"}, {"a*b?c", "axbyc"}, {"*", ""}, {"?*?", "é"}, {"***a", "aaaa"}} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, g, s string) {
		_ = CheckGlob(g)
		_ = CheckToolGlob(g)
		got := Match(g, s)
		if !utf8.ValidString(g) || !utf8.ValidString(s) || len(g) > 64 {
			return
		}
		if want := reference(g).MatchString(s); got != want {
			t.Fatalf("Match(%q, %q) = %v, the reference says %v", g, s, got, want)
		}
	})
}

func TestFirstMatchWins(t *testing.T) {
	p, err := New([]Rule{
		{Identities: []string{"support-*"}, Tools: []string{"billing.*"}, Action: Deny, Line: 3},
		{Identities: []string{"support-*"}, Tools: []string{"*"}, Action: Allow, Line: 8},
		{Scopes: []string{"tools:billing"}, Tools: []string{"billing.*"}, Action: Allow, Line: 13},
		{Identities: []string{"ops"}, Scopes: []string{"admin", "root"}, Tools: []string{"*"}, Action: Allow, Line: 18},
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		id     string
		scopes []string
		tool   string
		want   Decision
	}{
		{"support-alice", nil, "billing.refund", Decision{Allowed: false, Rule: 1, Line: 3}},
		// rule 3 would allow, but rule 1 comes first
		{"support-alice", []string{"tools:billing"}, "billing.refund", Decision{Allowed: false, Rule: 1, Line: 3}},
		{"support-alice", nil, "text.count", Decision{Allowed: true, Rule: 2, Line: 8}},
		{"finance-bob", []string{"tools:billing"}, "billing.refund", Decision{Allowed: true, Rule: 3, Line: 13}},
		{"finance-bob", []string{"tools:other"}, "billing.refund", Decision{}},                   // no rule: denied
		{"finance-bob", nil, "text.count", Decision{}},                                           // no rule: denied
		{"ops", nil, "text.count", Decision{}},                                                   // rule 4 needs a scope
		{"ops", []string{"x", "root"}, "text.count", Decision{Allowed: true, Rule: 4, Line: 18}}, // any one scope
		{"", nil, "text.count", Decision{}},                                                      // anonymous matches only "*"
	} {
		if got := p.Decide(c.id, c.scopes, c.tool); got != c.want {
			t.Errorf("Decide(%q, %q, %q) = %+v, want %+v", c.id, c.scopes, c.tool, got, c.want)
		}
	}
}

func TestNoRulesAllowsEverything(t *testing.T) {
	var nilPolicy *Policy
	empty, _ := New(nil)
	for _, p := range []*Policy{nilPolicy, empty} {
		if d := p.Decide("anyone", nil, "any.tool"); !d.Allowed || d.Rule != 0 {
			t.Fatalf("Decide = %+v, want allowed by no rule", d)
		}
	}
}

func TestDenyAllDefault(t *testing.T) {
	p, _ := New([]Rule{
		{Identities: []string{"alice"}, Tools: []string{"text.*"}, Action: Allow, Line: 1},
		{Identities: []string{"*"}, Tools: []string{"*"}, Action: Deny, Line: 5},
	})
	if d := p.Decide("bob", nil, "text.count"); d.Allowed || d.Rule != 2 {
		t.Fatalf("got %+v, want denied by rule 2", d)
	}
	if got := p.Explain(p.Decide("bob", nil, "text.count")); got != `denied by rule 2 (line 5): identities = ["*"], tools = ["*"], action = "deny"` {
		t.Fatalf("Explain: %s", got)
	}
}

func TestNewRefusesBadRules(t *testing.T) {
	for _, c := range []struct {
		rule Rule
		want string
	}{
		{Rule{Identities: []string{"*"}, Tools: []string{"*"}, Action: "permit"}, `rule 1: action must be "allow" or "deny", not "permit"`},
		{Rule{Identities: []string{"*"}, Action: Allow}, "rule 1: tools: the rule names no tools"},
		{Rule{Tools: []string{"*"}, Action: Allow}, "rule 1: the rule names no identities or scopes"},
		{Rule{Identities: []string{""}, Tools: []string{"*"}, Action: Allow}, "rule 1: identities: empty pattern"},
		{Rule{Identities: []string{"a\nb"}, Tools: []string{"*"}, Action: Allow}, "control character"},
		{Rule{Identities: []string{"*"}, Tools: []string{"billing/*"}, Action: Allow}, `can never match a tool name: '/'`},
		{Rule{Scopes: []string{strings.Repeat("s", 300)}, Tools: []string{"*"}, Action: Allow}, "scopes: pattern is 300 bytes"},
	} {
		_, err := New([]Rule{c.rule})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("New(%+v) = %v, want an error containing %q", c.rule, err, c.want)
		}
	}
}

func TestExplain(t *testing.T) {
	var none *Policy
	if got := none.Explain(none.Decide("a", nil, "t")); !strings.HasPrefix(got, "allowed: there are no access rules") {
		t.Fatal(got)
	}
	p, _ := New([]Rule{{Identities: []string{"alice"}, Scopes: []string{"s"}, Tools: []string{"t"}, Action: Allow}})
	if got := p.Explain(p.Decide("bob", nil, "t")); !strings.HasPrefix(got, "denied: no access rule matches") {
		t.Fatal(got)
	}
	if got := p.Explain(p.Decide("alice", []string{"s"}, "t")); got != `allowed by rule 1: identities = ["alice"], scopes = ["s"], tools = ["t"], action = "allow"` {
		t.Fatal(got)
	}
}

func TestDecideResourcesAndPrompts(t *testing.T) {
	p, err := New([]Rule{
		{Identities: []string{"*"}, Resources: []string{"notes://secret*"}, Action: Deny},
		{Identities: []string{"*"}, Resources: []string{"notes://*"}, Prompts: []string{"review"}, Action: Allow},
		{Identities: []string{"*"}, Tools: []string{"*"}, Action: Allow},
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		kind, name string
		allowed    bool
		rule       int
	}{
		{"resource", "notes://todo", true, 2},
		{"resource", "notes://secret/plan", false, 1},
		{"resource", "file:///etc/passwd", false, 0}, // tools = ["*"] says nothing of resources
		{"prompt", "review", true, 2},
		{"prompt", "other", false, 0},
		{"tool", "review", true, 3},
	} {
		var d Decision
		switch tt.kind {
		case "resource":
			d = p.DecideResource("alice", nil, tt.name)
		case "prompt":
			d = p.DecidePrompt("alice", nil, tt.name)
		default:
			d = p.Decide("alice", nil, tt.name)
		}
		if d.Allowed != tt.allowed || d.Rule != tt.rule {
			t.Errorf("%s %s: %+v, want allowed %v by rule %d", tt.kind, tt.name, d, tt.allowed, tt.rule)
		}
	}
	if _, err := New([]Rule{{Identities: []string{"*"}, Prompts: []string{"a/b"}, Action: Allow}}); err == nil {
		t.Error("a prompt glob no prompt name can match was accepted")
	}
	if _, err := New([]Rule{{Identities: []string{"*"}, Action: Allow}}); err == nil {
		t.Error("a rule naming nothing was accepted")
	}
}
