package config

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestKeyTablesMatchChecker keeps docs/CONFIG.md's key tables in step with
// the checker: for each section the document tables, the keys its table
// lists must be the keys the checker knows there, as the checker itself
// names them when it refuses an unknown key. A key added without a row, or
// a row left for a key that is gone, fails here.
func TestKeyTablesMatchChecker(t *testing.T) {
	doc, err := os.ReadFile("../../docs/CONFIG.md")
	if err != nil {
		t.Fatal(err)
	}
	// The heading's section, and the TOML that opens it in a file.
	sections := map[string]string{
		"`[dispatch]`":               "[dispatch]",
		"`[breaker]`":                "[breaker]",
		"`[limits]`":                 "[limits]",
		"`[reuse]`":                  "[reuse]",
		"`[runtime]`":                "[runtime]",
		"`[http]`":                   "[http]",
		"`[tools.\"NAME\"]`":         "[tools.\"t.x\"]",
		"`[governor]`":               "[governor]",
		"`[quotas.\"NAME\"]`":        "[quotas.\"q\"]\ncapacity = 1\ninterval = \"1s\"",
		"`[grants.\"MODULE.wasm\"]`": "[grants.\"m.wasm\"]\nhosts = [\"api.example.com\"]",
		"`[[access]]`":               "[[access]]\nidentities = [\"*\"]\ntools = [\"*\"]\naction = \"allow\"",
		"`[auth.oauth]`":             "[auth.oauth]",
		"`[redis]`":                  "[redis]",
		"`[trust]`":                  "[trust]",
		"`[input]`":                  "[input]",
	}
	// Subtables have sections of their own in the document.
	subtables := map[string][]string{"[governor]": {"priorities"}, "[tools.\"t.x\"]": {"breaker"}, "[grants.\"m.wasm\"]": {"headers"}}
	tables := keyTables(string(doc))
	for heading, header := range sections {
		t.Run(strings.SplitN(header, "\n", 2)[0], func(t *testing.T) {
			documented, ok := tables[heading]
			if !ok {
				t.Fatalf("docs/CONFIG.md has no key table under a heading naming %s", heading)
			}
			known := setMinus(checkerKeys(t, header), subtables[strings.SplitN(header, "\n", 2)[0]])
			if missing := setMinus(known, documented); len(missing) > 0 {
				t.Errorf("keys of %s without a row in docs/CONFIG.md: %v", header, missing)
			}
			if stale := setMinus(documented, known); len(stale) > 0 {
				t.Errorf("docs/CONFIG.md rows under %s for keys the checker does not know: %v", header, stale)
			}
		})
	}
}

// keyTables maps each heading's first backticked section name to the keys
// of the first table under it. Rows naming another section (`[modules…] reuse`)
// are left out: they belong to that section.
func keyTables(doc string) map[string][]string {
	heading := regexp.MustCompile("^#{2,3} .*?(`\\[[^`]+\\]`)")
	cell := regexp.MustCompile("`([a-z_]+)`")
	out := map[string][]string{}
	current, done, fenced := "", false, false
	for line := range strings.Lines(doc) {
		line = strings.TrimRight(line, "\n")
		if strings.HasPrefix(line, "```") {
			fenced = !fenced
			continue
		}
		if fenced {
			continue
		}
		if m := heading.FindStringSubmatch(line); m != nil {
			current, done = m[1], false
			continue
		}
		if strings.HasPrefix(line, "#") {
			current = ""
			continue
		}
		if current == "" || done {
			continue
		}
		if !strings.HasPrefix(line, "| `") {
			if len(out[current]) > 0 && !strings.HasPrefix(line, "|") {
				done = true // the table ended
			}
			continue
		}
		first := strings.Split(strings.Trim(line, "|"), "|")[0]
		if strings.HasPrefix(strings.TrimSpace(first), "`[") {
			continue
		}
		for _, m := range cell.FindAllStringSubmatch(first, -1) {
			out[current] = append(out[current], m[1])
		}
	}
	for k := range out {
		slices.Sort(out[k])
	}
	return out
}

// checkerKeys returns the keys the checker lists when it refuses an
// unknown one in the section header opens.
func checkerKeys(t *testing.T, header string) []string {
	t.Helper()
	_, err := Parse("doc.toml", []byte(header+"\nzzzz_not_a_key_at_all = 1\n"))
	if err == nil {
		t.Fatalf("%s: an unknown key was accepted", header)
	}
	_, list, ok := strings.Cut(err.Error(), "(known keys: ")
	if !ok {
		t.Fatalf("%s: the error does not list the known keys: %v", header, err)
	}
	list, _, _ = strings.Cut(list, ")")
	keys := strings.Split(list, ", ")
	slices.Sort(keys)
	return keys
}

func setMinus(a, b []string) []string {
	var out []string
	for _, k := range a {
		if !slices.Contains(b, k) {
			out = append(out, k)
		}
	}
	return out
}
