package main

import (
	"os"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/spf13/pflag"
	toolserver "github.com/toolhost/toolhost/server"
)

// TestServeFlagTableMatchesCode keeps docs/CLI.md's `toolhost serve` table
// in step with the flags serve registers: a flag added without a row, or a
// row left for a flag that is gone, fails here rather than in a user's
// hands.
func TestServeFlagTableMatchesCode(t *testing.T) {
	doc, err := os.ReadFile("../../docs/CLI.md")
	if err != nil {
		t.Fatal(err)
	}
	documented := flagRows(t, string(doc), "## `toolhost serve`")
	var registered []string
	newServeCmd().Flags().VisitAll(func(f *pflag.Flag) {
		if !f.Hidden {
			registered = append(registered, f.Name)
		}
	})
	sort.Strings(registered)
	var table []string
	for _, f := range toolserver.Flags() {
		table = append(table, f.Name)
	}
	sort.Strings(table)
	if extra, lost := minus(registered, table), minus(table, registered); len(extra)+len(lost) > 0 {
		t.Errorf("serve registers flags beside server.Flags' table (%v) or leaves some of it out (%v)", extra, lost)
	}
	if missing := minus(registered, documented); len(missing) > 0 {
		t.Errorf("serve flags without a row in docs/CLI.md: %v", missing)
	}
	if stale := minus(documented, registered); len(stale) > 0 {
		t.Errorf("docs/CLI.md rows for flags serve does not have: %v", stale)
	}
}

// TestFlagKeysDocumented: each flag the config file can set too is named
// in docs/CONFIG.md's section of its key, so an operator reading the file's
// reference learns that the command line wins.
func TestFlagKeysDocumented(t *testing.T) {
	doc, err := os.ReadFile("../../docs/CONFIG.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range toolserver.Flags() {
		if f.Key == "" {
			continue
		}
		section, _, _ := strings.Cut(f.Key, " ")
		_, text, ok := strings.Cut(string(doc), "\n## `"+section+"`")
		if !ok {
			t.Errorf("--%s: docs/CONFIG.md has no section for %s", f.Name, f.Key)
			continue
		}
		if next := strings.Index(text, "\n## "); next >= 0 {
			text = text[:next]
		}
		if !strings.Contains(text, "--"+f.Name+"`") {
			t.Errorf("docs/CONFIG.md's %s section does not name --%s, which sets %s too", section, f.Name, f.Key)
		}
	}
}

// flagRows returns the flag names of the first table under heading.
func flagRows(t *testing.T, doc, heading string) []string {
	t.Helper()
	_, section, ok := strings.Cut(doc, heading+"\n")
	if !ok {
		t.Fatalf("docs/CLI.md has no %q section", heading)
	}
	if next := strings.Index(section, "\n## "); next >= 0 {
		section = section[:next]
	}
	row := regexp.MustCompile("(?m)^\\| `--([a-z0-9-]+)")
	var names []string
	for _, m := range row.FindAllStringSubmatch(section, -1) {
		names = append(names, m[1])
	}
	if len(names) == 0 {
		t.Fatalf("no flag rows under %q", heading)
	}
	sort.Strings(names)
	return names
}

// minus returns the names of a that are not in b.
func minus(a, b []string) []string {
	in := make(map[string]bool, len(b))
	for _, n := range b {
		in[n] = true
	}
	var out []string
	for _, n := range a {
		if !in[n] {
			out = append(out, n)
		}
	}
	return out
}
