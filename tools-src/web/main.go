// Command web is a toolhost tool module that fetches web pages for a
// model: web.fetch gets an https URL through the host's governed egress and
// returns the page as Markdown (the main content, links kept, scripts,
// styles and navigation dropped), plain text, or the raw body, one window
// of max_bytes at a time; web.delete sends a DELETE once the user has confirmed
// it (an input request). They need an egress grant (examples/web.toml).
// Build it as a WASI reactor:
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -o plugins/web.wasm ./tools-src/web
package main

import (
	"errors"
	"fmt"
	"mime"
	"net/url"
	"strings"

	"github.com/toolhost/toolhost/abi/guest"
	"github.com/toolhost/toolhost/abi/guest/abi"
)

func init() {
	// web.fetch stays in fresh instances (no Instances: reuse): it parses
	// pages from anywhere, and its calls are network-bound, so a warm
	// instance would save little and keep whatever a hostile page left in
	// the parser's memory for the caller's next call.
	guest.Register("web.fetch", guest.Options{
		Title: "Fetch a web page",
		Description: "Fetches an https URL and returns its content for reading: as Markdown (default; the " +
			"page's main content with links kept, scripts, styles and navigation dropped), as plain text, or " +
			"raw. Long content comes in windows of max_bytes (default 20000): when truncated is true, call again " +
			"with start_index set to next_index to read on. Also returns the final URL after redirects, the " +
			"HTTP status and the content type. Only text types (HTML, plain text, JSON, XML, Markdown) are returned.",
		Idempotent: true, ReadOnly: true, TimeoutMS: 30000,
	}, fetch)
}

func main() {}

// client asks for what this tool can read and says who is asking.
var client = &guest.Client{Header: guest.Header{
	"Accept":     {"text/html,application/xhtml+xml,text/plain;q=0.9,application/json;q=0.8,*/*;q=0.5"},
	"User-Agent": {"toolhost-web.fetch/1 (+https://github.com/toolhost/toolhost)"},
}}

type fetchArgs struct {
	URL        string `json:"url" jsonschema:"description=the https URL to fetch,minLength=9,maxLength=4096"`
	Format     string `json:"format,omitempty" jsonschema:"enum=markdown,enum=text,enum=raw,default=markdown,description=markdown: the main content as Markdown; text: the main content as plain text; raw: the body as served"`
	MaxBytes   int    `json:"max_bytes,omitempty" jsonschema:"minimum=1,maximum=1000000,default=20000,description=largest window of content returned (in UTF-8 bytes)"`
	StartIndex int    `json:"start_index,omitempty" jsonschema:"minimum=0,default=0,description=byte offset into the converted content where the window starts"`
}

type page struct {
	URL         string `json:"url" jsonschema:"description=the URL asked for"`
	FinalURL    string `json:"final_url" jsonschema:"description=the URL that answered, after redirects"`
	Status      int    `json:"status"`
	ContentType string `json:"content_type"`
	Format      string `json:"format"`
	Title       string `json:"title,omitempty"`
	Note        string `json:"note,omitempty" jsonschema:"description=set when the page could not be converted as asked: what was returned instead"`
	Content     string `json:"content" jsonschema:"description=one window of the converted content"`
	StartIndex  int    `json:"start_index"`
	NextIndex   int    `json:"next_index,omitempty" jsonschema:"description=start_index of the next window when truncated"`
	TotalLength int    `json:"total_length" jsonschema:"description=length of the whole converted content in bytes"`
	Truncated   bool   `json:"truncated"`
}

const defaultMaxBytes = 20000

func fetch(a fetchArgs) (page, error) {
	u, err := url.Parse(a.URL)
	if err != nil || u.Scheme != "https" || u.Host == "" {
		return page{}, guest.Schemaf("url %q is not an absolute https URL (http is refused: pages are fetched over TLS only)", a.URL)
	}
	format := a.Format
	if format == "" {
		format = "markdown"
	}
	resp, err := client.Get(u.String())
	if err != nil {
		return page{}, explain(err)
	}
	final := resp.URL
	if final == "" {
		final = u.String()
	}
	if resp.StatusCode >= 500 {
		return page{}, guest.Transient(fmt.Errorf("%s answered %d", final, resp.StatusCode))
	}
	ctype := resp.Header.Get("Content-Type")
	media, params, _ := mime.ParseMediaType(ctype)
	if media == "" {
		media = sniff(resp.Body)
	}
	if !readable(media) {
		return page{}, guest.Schemaf("%s is %s, which web.fetch does not return: only HTML, text, JSON, XML and Markdown are", final, orUnknown(ctype))
	}
	content, title, note, err := convert(resp.Body, media, params["charset"], final, format)
	if err != nil {
		return page{}, err
	}
	max := a.MaxBytes
	if max == 0 {
		max = defaultMaxBytes
	}
	p := page{URL: a.URL, FinalURL: final, Status: resp.StatusCode, ContentType: orUnknown(ctype), Format: format, Title: title, Note: note}
	if err := p.window(content, a.StartIndex, max); err != nil {
		return page{}, err
	}
	return p, nil
}

// explain turns an egress failure into an error a model and an operator
// can act on; a missing grant names the config that adds one.
func explain(err error) error {
	var he *guest.HTTPError
	if errors.As(err, &he) {
		switch he.Kind {
		case abi.EgressDenied:
			if he.Grant == "module" {
				return guest.Schemaf("web.fetch has no network access: the operator must grant it, e.g. `toolhost serve --config examples/web.toml` "+
					"(a [grants.\"web.wasm\"] section with hosts = [\"*\"], methods = [\"GET\"]); the host said: %s", he.Message)
			}
			return guest.Schemaf("the request was refused by the operator's grant (%s): %s", he.Grant, he.Message)
		case abi.EgressTooLarge:
			return guest.Schemaf("the page is larger than this server lets web.fetch read (%s): %s", he.Grant, he.Message)
		}
	}
	return err // transient kinds keep their retry_after
}

func orUnknown(ctype string) string {
	if ctype == "" {
		return "of no declared type"
	}
	return ctype
}

// window sets the content to [start, start+max) of content, cut back to a
// UTF-8 boundary, and the paging fields.
func (p *page) window(content string, start, max int) error {
	p.TotalLength = len(content)
	if start > len(content) {
		return guest.Schemaf("start_index %d is past the end of the content (%d bytes)", start, len(content))
	}
	for start > 0 && start < len(content) && !utf8Start(content[start]) {
		start-- // a window starts on a character
	}
	end := min(len(content), start+max)
	for end < len(content) && end > start && !utf8Start(content[end]) {
		end--
	}
	p.StartIndex, p.Content = start, content[start:end]
	if end < len(content) {
		p.Truncated, p.NextIndex = true, end
	}
	return nil
}

func utf8Start(b byte) bool { return b&0xC0 != 0x80 }

// readable reports whether web.fetch returns media of this type.
func readable(media string) bool {
	switch {
	case strings.HasPrefix(media, "text/"):
		return true
	case media == "application/json", media == "application/xml", media == "application/xhtml+xml",
		strings.HasSuffix(media, "+json"), strings.HasSuffix(media, "+xml"):
		return true
	}
	return false
}
