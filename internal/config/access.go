package config

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/toolhost/toolhost/access"
)

// ruleKeys are the keys of an [[access]] rule.
var ruleKeys = []string{"action", "identities", "prompts", "resources", "scopes", "tools"}

// AccessPolicy returns the [[access]] rules as a policy for the transport
// and `toolhost access check`. A nil Config, or one without rules, returns
// a policy that allows everything.
func (c *Config) AccessPolicy() *access.Policy {
	if c == nil || len(c.Access) == 0 {
		return nil
	}
	p, err := access.New(c.Access)
	if err != nil {
		// parse checked every rule as access.New does.
		panic("config: a parsed access rule is invalid: " + err.Error())
	}
	return p
}

// accessSection checks the [[access]] rules: an array of tables, each with
// tools, action, and identities or scopes (see package access).
func (p *checker) accessSection(path []string, v any, c *Config) {
	var elems []map[string]any
	switch x := v.(type) {
	case []map[string]any:
		elems = x
	case []any: // access = [{...}, {...}]
		for _, e := range x {
			t, ok := e.(map[string]any)
			if !ok {
				p.fail(path, "must be an array of tables ([[access]] rules), but it holds %s", describe(e))
				return
			}
			elems = append(elems, t)
		}
	default:
		p.fail(path, "must be an array of tables, written as [[access]] sections, not %s", describe(v))
		return
	}
	// A rule after one that matches every caller and every name of each
	// kind it names (tools, resources, prompts) can never match.
	var catchAll [3]int
	for i, t := range elems {
		r := p.rule(path, i, t)
		if r == nil {
			continue
		}
		kinds := [3][]string{r.Tools, r.Resources, r.Prompts}
		shadowed, by := true, 0
		for k, globs := range kinds {
			if len(globs) > 0 {
				shadowed = shadowed && catchAll[k] > 0
				by = max(by, catchAll[k])
			}
		}
		if shadowed {
			p.failRule(path, i, "", "can never match: rule %d before it matches every caller and tool (first match wins)", by)
		}
		everyone := r.Identities != nil && slices.Contains(r.Identities, "*") && r.Scopes == nil
		for k, globs := range kinds {
			if catchAll[k] == 0 && everyone && slices.Contains(globs, "*") {
				catchAll[k] = i + 1
			}
		}
		c.Access = append(c.Access, *r)
	}
}

// rule checks rule i (0-based) of the [[access]] array; nil after a
// problem.
func (p *checker) rule(path []string, i int, t map[string]any) *access.Rule {
	r := &access.Rule{Line: p.rulePos(path, i, "").line}
	ok := true
	fail := func(key, format string, args ...any) {
		p.failRule(path, i, key, format, args...)
		ok = false
	}
	for _, k := range slices.Sorted(maps.Keys(t)) {
		v := t[k]
		switch k {
		case "identities", "scopes", "tools", "resources", "prompts":
			globs, good := p.globs(v)
			if !good {
				fail(k, "must be an array of strings such as [\"support-*\"], not %s", describe(v))
				continue
			}
			if len(globs) == 0 {
				fail(k, "is empty, so the rule could never match (write [\"*\"] for any, or leave the key out)")
				continue
			}
			check := access.CheckGlob
			if k == "tools" || k == "prompts" {
				check = access.CheckToolGlob
			}
			for _, g := range globs {
				if err := check(g); err != nil {
					fail(k, "%v", err)
				}
			}
			switch k {
			case "identities":
				r.Identities = globs
			case "scopes":
				r.Scopes = globs
			case "resources":
				r.Resources = globs
			case "prompts":
				r.Prompts = globs
			default:
				r.Tools = globs
			}
		case "action":
			s, _ := v.(string)
			if s != string(access.Allow) && s != string(access.Deny) {
				fail(k, "must be \"allow\" or \"deny\", not %s", describe(v))
				continue
			}
			r.Action = access.Action(s)
		default:
			if s := suggest(k, ruleKeys); s != "" {
				fail(k, "unknown key %q in an [[access]] rule; did you mean %q?", k, s)
			} else {
				fail(k, "unknown key %q in an [[access]] rule (known keys: %s)", k, strings.Join(ruleKeys, ", "))
			}
		}
	}
	_, tools := t["tools"]
	_, resources := t["resources"]
	_, prompts := t["prompts"]
	if !tools && !resources && !prompts {
		fail("", `names no tools: add tools = ["text.*", "json.get"] (globs over manifest names; ["*"] for all), or resources = [...] (globs over resource URIs) or prompts = [...]`)
	}
	if _, set := t["action"]; !set {
		fail("", `has no action: add action = "allow" or action = "deny"`)
	}
	_, ids := t["identities"]
	_, scopes := t["scopes"]
	if !ids && !scopes {
		fail("", `names no callers: add identities = ["support-*"] (globs over caller identities; ["*"] for all) or scopes = [...]`)
	}
	if !ok {
		return nil
	}
	return r
}

// globs returns v as a list of strings.
func (p *checker) globs(v any) ([]string, bool) {
	arr, ok := v.([]any)
	if !ok {
		return nil, false
	}
	out := make([]string, 0, len(arr))
	for _, e := range arr {
		s, ok := e.(string)
		if !ok {
			return nil, false
		}
		out = append(out, s)
	}
	return out, true
}

// failRule records a problem with key (or the whole rule, for "") of rule i.
func (p *checker) failRule(path []string, i int, key, format string, args ...any) {
	what := "access rule " + strconv.Itoa(i+1)
	if key != "" {
		what += ": " + key
	}
	p.errs = append(p.errs, problem{pos: p.rulePos(path, i, key), reason: what + ": " + fmt.Sprintf(format, args...)})
}

// rulePos is where key of rule i is written: the key's line in an
// [[access]] section, else the section's header, else (for the inline
// form access = [...]) the access key's line.
func (p *checker) rulePos(path []string, i int, key string) keyPos {
	elem := concat(path, []string{elemKey(i)})
	if key != "" {
		if pos, ok := p.keys[keyString(concat(elem, []string{key}))]; ok {
			return pos
		}
	}
	if pos, ok := p.keys[keyString(elem)]; ok {
		return pos
	}
	return p.keys[keyString(path)]
}
