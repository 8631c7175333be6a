package main

import (
	"strings"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// flatNote is what a page read by flatText says about itself.
const flatNote = "the page nests its elements deeper than the HTML parser allows (512 levels), " +
	"so its text is given without its structure: no main-content selection, links or Markdown"

// flatText reads an HTML page that html.Parse refuses (its open elements
// nest past 512) with the tokenizer, which keeps no tree: the text of the
// page outside scripts and styles, a line per block element, and its
// title. Such a page is rare and usually made to break parsers, but it is
// the page the caller asked for, not a fault of the tool or of the
// caller's arguments, so it is answered, not failed.
func flatText(text string) (content, title string) {
	z := html.NewTokenizer(strings.NewReader(text))
	var b strings.Builder
	skip, inTitle := 0, false
	for {
		tt := z.Next()
		switch tt {
		case html.ErrorToken:
			return collapse(b.String()), strings.TrimSpace(title)
		case html.TextToken:
			switch {
			case inTitle:
				title += string(z.Text())
			case skip == 0:
				b.Write(z.Text())
			}
		case html.StartTagToken, html.EndTagToken, html.SelfClosingTagToken:
			name, _ := z.TagName()
			a := atom.Lookup(name)
			switch a {
			case atom.Script, atom.Style, atom.Noscript, atom.Template:
				if tt == html.StartTagToken {
					skip++
				} else if tt == html.EndTagToken && skip > 0 {
					skip--
				}
			case atom.Title:
				inTitle = tt == html.StartTagToken
			case atom.Br:
				b.WriteByte('\n')
			default:
				if block[a.String()] {
					b.WriteByte('\n')
				}
			}
		}
	}
}

// collapse joins each line's words with single spaces and drops runs of
// blank lines: the last step of plainText and of the flat reading.
func collapse(s string) string {
	lines := strings.Split(s, "\n")
	out := make([]string, 0, len(lines))
	blank := true
	for _, l := range lines {
		l = strings.Join(strings.Fields(l), " ")
		if l == "" && blank {
			continue
		}
		blank = l == ""
		out = append(out, l)
	}
	return strings.TrimSpace(strings.Join(out, "\n")) + "\n"
}
