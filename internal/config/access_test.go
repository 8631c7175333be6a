package config

import (
	"reflect"
	"strings"
	"testing"

	"github.com/toolhost/toolhost/access"
)

func TestAccessRules(t *testing.T) {
	src := `[dispatch]
concurrency = 4

# support may use text tools but never billing
[[access]]
identities = ["support-*"]
tools = ["billing.*"]
action = "deny"

[[access]]
identities = ["support-*"]
tools = ["text.*", "json.get"]
action = "allow"

[[access]]
scopes = ["tools:billing"]
tools = ["billing.*"]
action = "allow"

[[access]]
identities = ["*"]
tools = ["*"]
action = "deny"
`
	c, err := Parse("t.toml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	want := []access.Rule{
		{Identities: []string{"support-*"}, Tools: []string{"billing.*"}, Action: access.Deny, Line: 5},
		{Identities: []string{"support-*"}, Tools: []string{"text.*", "json.get"}, Action: access.Allow, Line: 10},
		{Scopes: []string{"tools:billing"}, Tools: []string{"billing.*"}, Action: access.Allow, Line: 15},
		{Identities: []string{"*"}, Tools: []string{"*"}, Action: access.Deny, Line: 20},
	}
	if !reflect.DeepEqual(c.Access, want) {
		t.Fatalf("rules:\n got %+v\nwant %+v", c.Access, want)
	}
	p := c.AccessPolicy()
	if d := p.Decide("support-ann", nil, "billing.refund"); d.Allowed || d.Rule != 1 || d.Line != 5 {
		t.Fatalf("support-ann billing.refund: %+v", d)
	}
	if d := p.Decide("fin", []string{"tools:billing"}, "billing.refund"); !d.Allowed || d.Rule != 3 {
		t.Fatalf("fin billing.refund: %+v", d)
	}
	var none *Config
	if none.AccessPolicy() != nil || (&Config{}).AccessPolicy() != nil {
		t.Fatal("no rules must give the allow-all nil policy")
	}
}

// Rules name resources and prompts beside tools; a catch-all for tools
// does not shadow a later rule about resources.
func TestAccessResourcesAndPrompts(t *testing.T) {
	src := `[[access]]
identities = ["*"]
tools = ["*"]
action = "allow"

[[access]]
identities = ["alice"]
resources = ["notes://*"]
prompts = ["review"]
action = "allow"
`
	c, err := Parse("t.toml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Access) != 2 || !reflect.DeepEqual(c.Access[1].Resources, []string{"notes://*"}) || !reflect.DeepEqual(c.Access[1].Prompts, []string{"review"}) {
		t.Fatalf("rules = %+v", c.Access)
	}
	p := c.AccessPolicy()
	if !p.DecideResource("alice", nil, "notes://todo").Allowed || p.DecideResource("bob", nil, "notes://todo").Allowed {
		t.Error("resource decisions")
	}
}

func TestAccessInlineForm(t *testing.T) {
	c, err := Parse("t.toml", []byte(`access = [
  {identities = ["a"], tools = ["x"], action = "allow"},
]`))
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Access) != 1 || c.Access[0].Line != 1 || c.Access[0].Action != access.Allow {
		t.Fatalf("%+v", c.Access)
	}
}

func TestAccessErrors(t *testing.T) {
	for _, c := range []struct{ src, want string }{
		{"[[access]]\nidentities = [\"*\"]\ntools = [\"*\"]\nation = \"deny\"\n",
			`t.toml:1: access rule 1: has no action: add action = "allow" or action = "deny"`},
		{"[[access]]\nidentities = [\"*\"]\ntools = [\"*\"]\naction = \"deny\"\nation = 1\n",
			`t.toml:5: access rule 1: ation: unknown key "ation" in an [[access]] rule; did you mean "action"?`},
		{"[[access]]\nidentities = [\"*\"]\ntools = [\"*\"]\naction = \"permit\"\n",
			`t.toml:4: access rule 1: action: must be "allow" or "deny", not the string "permit"`},
		{"[[access]]\nidentities = [\"a\"]\ntools = [\"*\"]\naction = \"allow\"\n\n[[access]]\nidentities = [\"b\"]\ntools = [\"billing/*\"]\naction = \"deny\"\n",
			`t.toml:8: access rule 2: tools: pattern "billing/*" can never match a tool name: '/' is not a character of tool names (A-Z a-z 0-9 _ . -; * and ? are the wildcards)`},
		{"[[access]]\nidentities = []\ntools = [\"*\"]\naction = \"allow\"\n",
			`t.toml:2: access rule 1: identities: is empty, so the rule could never match (write ["*"] for any, or leave the key out)`},
		{"[[access]]\nidentities = \"support-*\"\ntools = [\"*\"]\naction = \"allow\"\n",
			`t.toml:2: access rule 1: identities: must be an array of strings such as ["support-*"], not the string "support-*"`},
		{"[[access]]\ntools = [\"*\"]\naction = \"allow\"\n",
			`t.toml:1: access rule 1: names no callers: add identities = ["support-*"] (globs over caller identities; ["*"] for all) or scopes = [...]`},
		{"[[access]]\nidentities = [\"*\"]\naction = \"allow\"\n",
			`t.toml:1: access rule 1: names no tools: add tools = ["text.*", "json.get"] (globs over manifest names; ["*"] for all), or resources = [...] (globs over resource URIs) or prompts = [...]`},
		{"[[access]]\nidentities = [\"*\"]\ntools = [\"*\"]\naction = \"deny\"\n[[access]]\nidentities = [\"a\"]\ntools = [\"x\"]\naction = \"allow\"\n",
			`t.toml:5: access rule 2: can never match: rule 1 before it matches every caller and tool (first match wins)`},
		{"[[access]]\nidentities = [\"*\"]\nprompts = [\"a/b\"]\naction = \"allow\"\n",
			`t.toml:3: access rule 1: prompts: pattern "a/b" can never match a tool name: '/' is not a character of tool names (A-Z a-z 0-9 _ . -; * and ? are the wildcards)`},
		{"[[access]]\nidentities = [\"*\"]\nresources = [\"*\"]\naction = \"deny\"\n[[access]]\nidentities = [\"a\"]\nresources = [\"x://*\"]\naction = \"allow\"\n",
			`t.toml:5: access rule 2: can never match: rule 1 before it matches every caller and tool (first match wins)`},
		{"[access]\nidentities = [\"*\"]\n",
			`t.toml:1: access: must be an array of tables, written as [[access]] sections, not a table`},
		{"[[acess]]\nidentities = [\"*\"]\n",
			`t.toml:1: acess: unknown key "acess" at the top level; did you mean "access"?`},
		{"[[access]]\nidentities = [\"\"]\ntools = [\"*\"]\naction = \"allow\"\n",
			`t.toml:2: access rule 1: identities: empty pattern (write "*" for any)`},
	} {
		_, err := Parse("t.toml", []byte(c.src))
		if err == nil || err.Error() != c.want {
			t.Errorf("Parse(%q):\n got %v\nwant %s", c.src, err, c.want)
		}
	}
}

// FuzzAccessRules feeds arbitrary rule text through the config parser: it
// must never panic, and every rule it accepts must build a policy (the
// parser and access.New agree on what a valid rule is).
func FuzzAccessRules(f *testing.F) {
	f.Add(`["support-*"]`, `["text.*", "json.get"]`, "allow")
	f.Add(`["*"]`, `["*"]`, "deny")
	f.Add(`[]`, `["a?c"]`, "permit")
	f.Add(`["\u0000"]`, `["x/y"]`, "allow")
	f.Fuzz(func(t *testing.T, ids, tools, action string) {
		src := "[[access]]\nidentities = " + ids + "\ntools = " + tools + "\naction = \"" + strings.ReplaceAll(action, `"`, "") + "\"\n"
		c, err := Parse("f.toml", []byte(src))
		if err != nil {
			if _, ok := err.(*Error); !ok {
				t.Fatalf("error of type %T: %v", err, err)
			}
			return
		}
		if _, err := access.New(c.Access); err != nil {
			t.Fatalf("the parser accepted a rule access.New refuses: %v\n%s", err, src)
		}
		p := c.AccessPolicy()
		for _, r := range c.Access {
			for _, tool := range r.Tools {
				_ = p.Decide(ids, nil, tool)
			}
		}
	})
}

// TestAccessDocExamples keeps the access and secrets examples of
// docs/CONFIG.md (fenced as "toml access") valid, and the access check
// output it shows true.
func TestAccessDocExamples(t *testing.T) {
	blocks := configDocExamples(t, "access")
	if len(blocks) != 2 {
		t.Fatalf("found %d access examples in docs/CONFIG.md, want 2", len(blocks))
	}
	for i, b := range blocks {
		c, err := Parse("CONFIG.md", b[1])
		if err != nil {
			t.Fatalf("example %d: %v", i+1, err)
		}
		if i == 1 {
			p := c.AccessPolicy()
			got := p.Explain(p.Decide("support-ann", nil, "billing.refund"))
			if want := `denied by rule 1 (line 2): identities = ["support-*"], tools = ["billing.*"], action = "deny"`; got != want || !strings.Contains(string(configDoc(t)), want) {
				t.Errorf("access check says %s; docs/CONFIG.md must show it", got)
			}
		}
	}
}
