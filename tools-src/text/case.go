package main

import (
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/toolhost/toolhost/abi/guest"
)

type caseArgs struct {
	Text string `json:"text" jsonschema:"description=the text to convert"`
	To   string `json:"to" jsonschema:"enum=upper,enum=lower,enum=title,enum=snake,enum=kebab,enum=camel,description=the target case"`
}

type textResult struct {
	Text string `json:"text"`
}

func changeCase(a caseArgs) (textResult, error) {
	var out string
	switch a.To {
	case "upper":
		out = strings.ToUpper(a.Text)
	case "lower":
		out = strings.ToLower(a.Text)
	case "title":
		out = titleCase(a.Text)
	case "snake":
		out = strings.ToLower(strings.Join(splitWords(a.Text), "_"))
	case "kebab":
		out = strings.ToLower(strings.Join(splitWords(a.Text), "-"))
	case "camel":
		var b strings.Builder
		for i, w := range splitWords(a.Text) {
			if i == 0 {
				b.WriteString(strings.ToLower(w))
			} else {
				b.WriteString(capitalize(w))
			}
		}
		out = b.String()
	default:
		// The input schema's enum stops this at the host; the check is for
		// callers that skip it (native tests, other hosts).
		return textResult{}, guest.Schemaf("to must be upper, lower, title, snake, kebab or camel, got %q", a.To)
	}
	return textResult{Text: out}, nil
}

// titleCase keeps the original spacing, unlike a split and join.
func titleCase(s string) string {
	var b strings.Builder
	start := true
	for _, r := range s {
		switch {
		case unicode.IsSpace(r):
			start = true
		case start:
			r, start = unicode.ToTitle(r), false
		default:
			r = unicode.ToLower(r)
		}
		b.WriteRune(r)
	}
	return b.String()
}

func capitalize(w string) string {
	r, n := utf8.DecodeRuneInString(w)
	return string(unicode.ToTitle(r)) + strings.ToLower(w[n:])
}

// splitWords splits at every rune that is not a letter or digit, and inside a
// run of letters where the case changes: "fooBar" → foo Bar, "HTTPServer" →
// HTTP Server, "utf8Decoder" → utf8 Decoder. Digits never start a word, so
// "v2" and "utf8" stay whole.
func splitWords(s string) []string {
	var words []string
	rs := []rune(s)
	start := -1
	for i, r := range rs {
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) {
			if start >= 0 {
				words = append(words, string(rs[start:i]))
				start = -1
			}
			continue
		}
		if start < 0 {
			start = i
			continue
		}
		prev := rs[i-1]
		nextLower := i+1 < len(rs) && unicode.IsLower(rs[i+1])
		if unicode.IsUpper(r) && (unicode.IsLower(prev) || unicode.IsDigit(prev) || unicode.IsUpper(prev) && nextLower) {
			words = append(words, string(rs[start:i]))
			start = i
		}
	}
	if start >= 0 {
		words = append(words, string(rs[start:]))
	}
	return words
}

type slugArgs struct {
	Text      string `json:"text" jsonschema:"description=the text to turn into a slug"`
	Separator string `json:"separator,omitempty" jsonschema:"enum=-,enum=_,default=-,description=the character between words"`
	MaxLength int    `json:"max_length,omitempty" jsonschema:"minimum=1,maximum=1000,description=longest slug in characters"`
}

type slugResult struct {
	Slug string `json:"slug"`
}

func slug(a slugArgs) (slugResult, error) {
	sep := a.Separator
	switch sep {
	case "":
		sep = "-"
	case "-", "_":
	default:
		return slugResult{}, guest.Schemaf("separator must be - or _, got %q", sep)
	}
	if a.MaxLength < 0 {
		return slugResult{}, guest.Schemaf("max_length must be at least 1, got %d", a.MaxLength)
	}
	var words []string
	var w strings.Builder
	flush := func() {
		if w.Len() > 0 {
			words = append(words, w.String())
			w.Reset()
		}
	}
	folded := fold()
	for _, r := range a.Text {
		r = unicode.ToLower(r)
		switch {
		case r == '\'' || r == '’' || unicode.Is(unicode.Mn, r):
			// "don't" → dont, and combining accents vanish with their base
			// letter already folded.
		case folded[r] != "":
			w.WriteString(folded[r])
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			w.WriteRune(r)
		default:
			flush()
		}
	}
	flush()
	if len(words) == 0 {
		return slugResult{}, guest.Schemaf("text has no letters or digits to make a slug from")
	}
	out := []rune(strings.Join(words, sep))
	if n := a.MaxLength; n > 0 && len(out) > n {
		// Cut before the word that does not fit, unless the first word
		// alone is too long.
		cut := n
		if out[n] != rune(sep[0]) {
			for cut > 0 && out[cut] != rune(sep[0]) {
				cut--
			}
			if cut == 0 {
				cut = n
			}
		}
		out = out[:cut]
	}
	return slugResult{Slug: string(out)}, nil
}

// fold maps lowercase Latin letters with diacritics to ASCII. It covers
// Latin-1 and Latin Extended-A, which is what European text uses; a full
// Unicode decomposition table would triple the module for little gain.
// It is built on first use, not in init, which runs in every fresh
// instance whichever tool it serves.
var fold = sync.OnceValue(func() map[rune]string {
	m := map[rune]string{'æ': "ae", 'œ': "oe", 'ß': "ss", 'þ': "th", 'ĳ': "ij", 'ð': "d"}
	for _, row := range []string{
		"aàáâãäåāăą", "cçćĉċč", "dďđ", "eèéêëēĕėęě", "gĝğġģ", "hĥħ", "iìíîïĩīĭįı", "jĵ", "kķ",
		"lĺļľŀł", "nñńņňŉ", "oòóôõöøōŏő", "rŕŗř", "sśŝşšſ", "tţťŧ", "uùúûüũūŭůűų", "wŵ", "yýÿŷ", "zźżž",
	} {
		base := row[:1]
		for _, r := range row[1:] {
			m[r] = base
		}
	}
	return m
})
