// Command text is a toolhost tool module for everyday text work: counting,
// regexp search, case conversion and slugs. Build it as a WASI reactor:
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -o plugins/text.wasm ./tools-src/text
package main

import (
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/toolhost/toolhost/abi/guest"
	"github.com/toolhost/toolhost/abi/guest/abi"
)

// Every tool here is a pure function of its arguments that answers in
// milliseconds; 5 s only stops a pathological input early. They keep
// nothing between calls, so a caller's calls may share a warm instance.
var pure = guest.Options{Idempotent: true, ReadOnly: true, TimeoutMS: 5000, Instances: abi.InstancesReuse}

func init() {
	register("text.count", "Count words, lines and characters",
		"Counts the words (runs of non-whitespace), lines, Unicode characters (runes) and UTF-8 bytes "+
			"of a text. A final newline does not start a new line; the empty text has 0 lines.",
		count)
	register("text.find", "Find regular expression matches",
		"Finds every match of a regular expression (Go RE2 syntax: no backreferences or lookaround; "+
			"prefix (?i) for case-insensitive, (?m) for ^ and $ at line breaks) in a text. Returns each "+
			"match with its start and end offsets in Unicode characters (end exclusive) and its capture "+
			"groups, at most limit matches (default 100).",
		find)
	register("text.case", "Change letter case",
		"Converts a text to upper, lower or title case (first letter of each space-separated word "+
			"upper, the rest lower), or re-joins its words as snake_case, kebab-case or camelCase. "+
			"For snake, kebab and camel, words are split at anything that is not a letter or digit "+
			"and at case changes, so \"HTTPServer error\" becomes http_server_error.",
		changeCase)
	register("text.slug", "Make a URL slug",
		"Turns a text into a lowercase URL slug: letters and digits are kept, Latin letters with "+
			"accents are folded to ASCII (é to e, ß to ss), apostrophes are dropped, and every other "+
			"run of characters becomes one separator. Letters of other scripts are kept. max_length "+
			"cuts at a separator where possible.",
		slug)
}

func register[A, R any](name, title, desc string, fn func(A) (R, error)) {
	opts := pure
	opts.Title, opts.Description = title, desc
	guest.Register(name, opts, fn)
}

func main() {}

type countArgs struct {
	Text string `json:"text" jsonschema:"description=the text to measure"`
}

type counts struct {
	Words int `json:"words"`
	Lines int `json:"lines"`
	Runes int `json:"runes" jsonschema:"description=Unicode characters"`
	Bytes int `json:"bytes" jsonschema:"description=length in UTF-8"`
}

func count(a countArgs) (counts, error) {
	lines := strings.Count(a.Text, "\n")
	if a.Text != "" && !strings.HasSuffix(a.Text, "\n") {
		lines++
	}
	return counts{
		Words: len(strings.Fields(a.Text)),
		Lines: lines,
		Runes: utf8.RuneCountInString(a.Text),
		Bytes: len(a.Text),
	}, nil
}

const (
	defaultFindLimit = 100
	maxFindLimit     = 1000
)

type findArgs struct {
	Text    string `json:"text" jsonschema:"description=the text to search"`
	Pattern string `json:"pattern" jsonschema:"minLength=1,maxLength=1000,description=RE2 regular expression"`
	Limit   int    `json:"limit,omitempty" jsonschema:"minimum=1,maximum=1000,default=100,description=most matches to return"`
}

type match struct {
	Text   string   `json:"text"`
	Start  int      `json:"start" jsonschema:"description=offset of the first character in Unicode characters"`
	End    int      `json:"end" jsonschema:"description=offset just past the last character"`
	Groups []string `json:"groups,omitempty" jsonschema:"description=capture groups in order; a group that did not take part is empty"`
}

type findResult struct {
	Count     int     `json:"count" jsonschema:"description=matches returned"`
	Truncated bool    `json:"truncated" jsonschema:"description=true when more matches exist beyond limit"`
	Matches   []match `json:"matches"`
}

func find(a findArgs) (findResult, error) {
	limit := a.Limit
	switch {
	case limit == 0:
		limit = defaultFindLimit
	case limit < 0 || limit > maxFindLimit:
		return findResult{}, guest.Schemaf("limit must be between 1 and %d, got %d", maxFindLimit, limit)
	}
	re, err := regexp.Compile(a.Pattern)
	if err != nil {
		return findResult{}, guest.Schemaf("pattern: %v", err)
	}
	locs := re.FindAllStringSubmatchIndex(a.Text, limit+1)
	res := findResult{Matches: []match{}}
	if len(locs) > limit {
		locs, res.Truncated = locs[:limit], true
	}
	// Matches come in order, so byte offsets convert to rune offsets in one
	// pass over the text instead of a count from the start per match.
	runeAt, byteAt := 0, 0
	toRunes := func(b int) int {
		runeAt += utf8.RuneCountInString(a.Text[byteAt:b])
		byteAt = b
		return runeAt
	}
	for _, loc := range locs {
		m := match{Text: a.Text[loc[0]:loc[1]]}
		m.Start = toRunes(loc[0])
		m.End = toRunes(loc[1])
		for g := 2; g < len(loc); g += 2 {
			s := ""
			if loc[g] >= 0 {
				s = a.Text[loc[g]:loc[g+1]]
			}
			m.Groups = append(m.Groups, s)
		}
		res.Matches = append(res.Matches, m)
	}
	res.Count = len(res.Matches)
	return res, nil
}
