// Package access decides which caller may see and call which tool, from the
// operator's ordered [[access]] rules. It is pure: no I/O, no clock, no
// knowledge of MCP; the transport asks it once per listed tool and once per
// call, and `toolhost access check` asks it to explain a decision.
//
// Semantics, in one place:
//   - The first rule that matches decides (allow or deny).
//   - A rule matches when the caller's identity matches one of its identity
//     globs (or it has none), the caller holds a scope matching one of its
//     scope globs (or it has none), and the manifest name matches one of its
//     tool globs. Resources (by URI) and prompts (by name) are decided the
//     same way over a rule's resource and prompt globs: a rule that names
//     no resources never matches a resource, and so on.
//   - With no rules at all, everything is allowed (toolhost's behaviour
//     before access rules existed).
//   - With rules, a call that no rule matches is denied: an operator who
//     wrote rules meant to restrict, and a forgotten case should fail
//     closed. Write a last rule identities = ["*"], tools = ["*"],
//     action = "allow" to fail open instead.
//
// Globs are deliberately tiny (see Match): '*' is any run of characters,
// '?' one character, everything else is literal.
package access

import (
	"errors"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Action is what a matching rule decides.
type Action string

// The two actions.
const (
	Allow Action = "allow"
	Deny  Action = "deny"
)

// Rule is one [[access]] rule. Identities, Scopes and Tools are globs (see
// Match); an empty Identities or Scopes list places no condition.
type Rule struct {
	Identities []string
	Scopes     []string
	Tools      []string
	// Resources are globs over resource URIs (and URI templates, which
	// are listed and read as what they are written as); Prompts over
	// prompt names.
	Resources []string
	Prompts   []string
	Action    Action
	// Line is where the rule starts in its config file (0 if unknown);
	// only reported, never used to decide.
	Line int
}

// Policy is an ordered list of rules. It is immutable once built and safe
// for concurrent use. A nil *Policy allows everything.
type Policy struct {
	rules []Rule
}

// New checks every glob and action of rules and returns the policy. Errors
// name the rule by its 1-based index.
func New(rules []Rule) (*Policy, error) {
	for i, r := range rules {
		if err := r.check(); err != nil {
			return nil, fmt.Errorf("rule %d: %w", i+1, err)
		}
	}
	return &Policy{rules: append([]Rule(nil), rules...)}, nil
}

func (r Rule) check() error {
	if r.Action != Allow && r.Action != Deny {
		return fmt.Errorf("action must be %q or %q, not %q", Allow, Deny, r.Action)
	}
	if len(r.Tools) == 0 && len(r.Resources) == 0 && len(r.Prompts) == 0 {
		return errors.New(`tools: the rule names no tools, resources or prompts (write tools = ["*"] for every tool)`)
	}
	if len(r.Identities) == 0 && len(r.Scopes) == 0 {
		return errors.New(`the rule names no identities or scopes (write identities = ["*"] for every caller)`)
	}
	for _, g := range r.Identities {
		if err := CheckGlob(g); err != nil {
			return fmt.Errorf("identities: %w", err)
		}
	}
	for _, g := range r.Scopes {
		if err := CheckGlob(g); err != nil {
			return fmt.Errorf("scopes: %w", err)
		}
	}
	for _, g := range r.Tools {
		if err := CheckToolGlob(g); err != nil {
			return fmt.Errorf("tools: %w", err)
		}
	}
	for _, g := range r.Resources {
		if err := CheckGlob(g); err != nil {
			return fmt.Errorf("resources: %w", err)
		}
	}
	for _, g := range r.Prompts {
		if err := CheckToolGlob(g); err != nil {
			return fmt.Errorf("prompts: %w", err)
		}
	}
	return nil
}

// Rules returns a copy of the policy's rules, in order.
func (p *Policy) Rules() []Rule {
	if p == nil {
		return nil
	}
	return append([]Rule(nil), p.rules...)
}

// Decision is the answer for one (caller, tool).
type Decision struct {
	// Allowed says whether the caller may see and call the tool.
	Allowed bool
	// Rule is the 1-based index of the rule that decided; 0 when none
	// matched (or there are no rules).
	Rule int
	// Line is that rule's line in the config file (0 if none or unknown).
	Line int
}

// Decide is the decision for a caller (identity and the scopes its token
// carries) and a tool's manifest name: the first matching rule's action;
// allowed when there are no rules; denied when rules exist and none
// matches.
func (p *Policy) Decide(identity string, scopes []string, tool string) Decision {
	return p.decide(identity, scopes, func(r Rule) []string { return r.Tools }, tool)
}

// DecideResource is Decide for a resource's URI (or a resource template's
// URI template), over the rules' resource globs.
func (p *Policy) DecideResource(identity string, scopes []string, uri string) Decision {
	return p.decide(identity, scopes, func(r Rule) []string { return r.Resources }, uri)
}

// DecidePrompt is Decide for a prompt's name, over the rules' prompt globs.
func (p *Policy) DecidePrompt(identity string, scopes []string, prompt string) Decision {
	return p.decide(identity, scopes, func(r Rule) []string { return r.Prompts }, prompt)
}

func (p *Policy) decide(identity string, scopes []string, globs func(Rule) []string, name string) Decision {
	if p == nil || len(p.rules) == 0 {
		return Decision{Allowed: true}
	}
	for i, r := range p.rules {
		if r.matches(identity, scopes, globs(r), name) {
			return Decision{Allowed: r.Action == Allow, Rule: i + 1, Line: r.Line}
		}
	}
	return Decision{}
}

// Empty reports whether the policy has no rules (everything is allowed).
func (p *Policy) Empty() bool { return p == nil || len(p.rules) == 0 }

func (r Rule) matches(identity string, scopes []string, names []string, name string) bool {
	if len(r.Identities) > 0 && !anyMatch(r.Identities, identity) {
		return false
	}
	if len(r.Scopes) > 0 {
		held := false
		for _, s := range scopes {
			if anyMatch(r.Scopes, s) {
				held = true
				break
			}
		}
		if !held {
			return false
		}
	}
	return anyMatch(names, name)
}

func anyMatch(globs []string, s string) bool {
	for _, g := range globs {
		if Match(g, s) {
			return true
		}
	}
	return false
}

// Explain says in one sentence why d was decided, for `toolhost access
// check` and logs.
func (p *Policy) Explain(d Decision) string {
	verb := "denied"
	if d.Allowed {
		verb = "allowed"
	}
	switch {
	case p.Empty():
		return "allowed: there are no access rules, so every caller may call every tool"
	case d.Rule == 0:
		return "denied: no access rule matches, and with rules present an unmatched call is denied"
	}
	r := p.rules[d.Rule-1]
	at := ""
	if r.Line > 0 {
		at = fmt.Sprintf(" (line %d)", r.Line)
	}
	return fmt.Sprintf("%s by rule %d%s: %s", verb, d.Rule, at, r.describe())
}

// describe prints a rule as the config wrote it.
func (r Rule) describe() string {
	var parts []string
	if len(r.Identities) > 0 {
		parts = append(parts, "identities = "+list(r.Identities))
	}
	if len(r.Scopes) > 0 {
		parts = append(parts, "scopes = "+list(r.Scopes))
	}
	if len(r.Tools) > 0 {
		parts = append(parts, "tools = "+list(r.Tools))
	}
	if len(r.Resources) > 0 {
		parts = append(parts, "resources = "+list(r.Resources))
	}
	if len(r.Prompts) > 0 {
		parts = append(parts, "prompts = "+list(r.Prompts))
	}
	parts = append(parts, fmt.Sprintf("action = %q", r.Action))
	return strings.Join(parts, ", ")
}

func list(ss []string) string {
	q := make([]string, len(ss))
	for i, s := range ss {
		q[i] = fmt.Sprintf("%q", s)
	}
	return "[" + strings.Join(q, ", ") + "]"
}

// MaxGlobLen bounds a glob: a longer one is taken for a mistake.
const MaxGlobLen = 256

// CheckGlob reports what is wrong with a glob over identities or scopes:
// empty, too long, not UTF-8, or holding control characters.
func CheckGlob(g string) error {
	switch {
	case g == "":
		return errors.New(`empty pattern (write "*" for any)`)
	case len(g) > MaxGlobLen:
		return fmt.Errorf("pattern is %d bytes, over the limit of %d", len(g), MaxGlobLen)
	case !utf8.ValidString(g):
		return errors.New("pattern is not valid UTF-8")
	}
	for _, c := range g {
		if unicode.IsControl(c) {
			return fmt.Errorf("pattern %q holds a control character", g)
		}
	}
	return nil
}

// CheckToolGlob is CheckGlob for globs over manifest names, which also
// refuses a pattern that no manifest name can match: beside '*' and '?',
// only the characters of ^[A-Za-z0-9_.-]+$.
func CheckToolGlob(g string) error {
	if err := CheckGlob(g); err != nil {
		return err
	}
	for _, c := range g {
		if c != '*' && c != '?' && !toolChar(c) {
			return fmt.Errorf("pattern %q can never match a tool name: %q is not a character of tool names (A-Z a-z 0-9 _ . -; * and ? are the wildcards)", g, c)
		}
	}
	return nil
}

func toolChar(c rune) bool {
	return 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '_' || c == '.' || c == '-'
}

// Match reports whether s matches the glob g: '*' matches any run of
// characters (also none, also '.' and '/'), '?' exactly one character,
// anything else itself. There are no character classes and no escapes, so
// identities such as "auth0|123" and URLs need none. It runs in
// O(len(g) × len(s)) at worst.
func Match(g, s string) bool {
	// The classic greedy algorithm: remember the last '*' and where in s
	// it started matching, and on a mismatch let it take one more
	// character.
	gi, si := 0, 0
	star, mark := -1, 0
	for si < len(s) {
		if gi < len(g) {
			gc, gw := utf8.DecodeRuneInString(g[gi:])
			sc, sw := utf8.DecodeRuneInString(s[si:])
			switch {
			case gc == '*':
				star, mark = gi, si
				gi++
				continue
			case gc == '?' || gc == sc:
				gi += gw
				si += sw
				continue
			}
		}
		if star < 0 {
			return false
		}
		_, sw := utf8.DecodeRuneInString(s[mark:])
		mark += sw
		gi, si = star+1, mark
	}
	for gi < len(g) && g[gi] == '*' {
		gi++
	}
	return gi == len(g)
}
