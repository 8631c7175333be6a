package main

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"unicode/utf8"

	"codeberg.org/readeck/go-readability/v2"
	"github.com/JohannesKaufmann/html-to-markdown/v2/converter"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/base"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/commonmark"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/strikethrough"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/table"
	"golang.org/x/net/html"
	"golang.org/x/net/html/charset"
)

// convert turns a body of the given media type into the requested format.
// HTML goes through readability (the main content) and then to Markdown or
// text; other text types are returned as they are. A page the HTML parser
// refuses is given as flat text, with a note saying so.
func convert(body []byte, media, cs, pageURL, format string) (content, title, note string, err error) {
	text, err := decode(body, media, cs)
	if err != nil {
		return "", "", "", err
	}
	isHTML := media == "text/html" || media == "application/xhtml+xml"
	if format == "raw" || !isHTML {
		return text, "", "", nil
	}
	doc, err := html.Parse(strings.NewReader(text))
	if err != nil {
		// x/net/html fails only past 512 open elements (its reader cannot
		// fail on a string): the page, not the caller's arguments or the
		// tool, is at fault, and it can still be read.
		content, title := flatText(text)
		return content, title, flatNote, nil
	}
	content, title, err = structured(doc, pageURL, format)
	return content, title, "", err
}

// structured converts a parsed page: its main content, as Markdown or text.
func structured(doc *html.Node, pageURL, format string) (content, title string, err error) {
	base, _ := url.Parse(pageURL)
	node := doc
	if article, err := readability.FromDocument(doc, base); err == nil && article.Node != nil {
		node, title = article.Node, strings.TrimSpace(article.Title())
	} else {
		title = docTitle(doc)
	}
	if format == "text" {
		return withTitle(title, "", plainText(node)), title, nil
	}
	md, err := markdown().ConvertNode(node, converter.WithDomain(domainOf(base)))
	if err != nil {
		return "", "", fmt.Errorf("%s: converting to Markdown: %w", pageURL, err)
	}
	return withTitle(title, "# ", strings.TrimSpace(string(md))+"\n"), title, nil
}

// markdown is CommonMark with GitHub's tables and strikethrough: tables
// are common in pages a model reads, and lose their shape otherwise.
func markdown() *converter.Converter {
	return converter.NewConverter(converter.WithPlugins(
		base.NewBasePlugin(), commonmark.NewCommonmarkPlugin(),
		table.NewTablePlugin(), strikethrough.NewStrikethroughPlugin()))
}

// withTitle puts the title first (readability takes it out of the
// content), unless the content already starts with it.
func withTitle(title, prefix, content string) string {
	if title == "" || strings.HasPrefix(strings.TrimLeft(content, "# "), title) {
		return content
	}
	return prefix + title + "\n\n" + content
}

// decode returns the body as UTF-8, converting from the declared or sniffed
// charset.
func decode(body []byte, media, cs string) (string, error) {
	if utf8.Valid(body) && (cs == "" || strings.EqualFold(cs, "utf-8")) {
		return string(body), nil
	}
	r, err := charset.NewReaderLabel(cs, bytes.NewReader(body))
	if err != nil || cs == "" {
		enc, _, _ := charset.DetermineEncoding(body, media)
		r = enc.NewDecoder().Reader(bytes.NewReader(body))
	}
	b, err := io.ReadAll(r)
	if err != nil {
		return "", fmt.Errorf("decoding the %s body: %w", cs, err)
	}
	return strings.ToValidUTF8(string(b), "\uFFFD"), nil
}

// sniff guesses the media type of a body served without one.
func sniff(body []byte) string {
	media, _, _ := strings.Cut(http.DetectContentType(body), ";")
	return media
}

func domainOf(u *url.URL) string {
	if u == nil {
		return ""
	}
	return u.Scheme + "://" + u.Host
}

func docTitle(doc *html.Node) string {
	var walk func(*html.Node) string
	walk = func(n *html.Node) string {
		if n.Type == html.ElementNode && n.Data == "title" && n.FirstChild != nil {
			return strings.TrimSpace(n.FirstChild.Data)
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			if t := walk(c); t != "" {
				return t
			}
		}
		return ""
	}
	return walk(doc)
}

// plainText is the node's text with block elements on lines of their own
// and runs of blank lines collapsed.
func plainText(n *html.Node) string {
	var b strings.Builder
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		switch n.Type {
		case html.TextNode:
			// Collapse white space as a browser does, keeping one space
			// where the source had any at either end.
			words := strings.Join(strings.Fields(n.Data), " ")
			if words != "" && n.Data[0] <= ' ' {
				words = " " + words
			}
			if words != "" && n.Data[len(n.Data)-1] <= ' ' {
				words += " "
			}
			b.WriteString(words)
			return
		case html.ElementNode:
			switch n.Data {
			case "script", "style", "noscript", "template":
				return
			case "br":
				b.WriteByte('\n')
				return
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
		if n.Type == html.ElementNode && block[n.Data] {
			b.WriteByte('\n')
		}
		if n.Type == html.ElementNode && (n.Data == "td" || n.Data == "th") {
			b.WriteString("\t")
		}
	}
	walk(n)
	return collapse(b.String())
}

var block = map[string]bool{
	"p": true, "div": true, "li": true, "h1": true, "h2": true, "h3": true, "h4": true, "h5": true, "h6": true,
	"tr": true, "pre": true, "blockquote": true, "section": true, "article": true, "header": true, "footer": true,
	"table": true, "ul": true, "ol": true, "dl": true, "dt": true, "dd": true, "figure": true, "figcaption": true,
}
