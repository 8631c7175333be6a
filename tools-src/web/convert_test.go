package main

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolhost/toolhost/abi/guest/abi"
	"github.com/toolhost/toolhost/tools-src/internal/tooltest"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// TestConvertGolden: HTML pages and other text bodies converted to each
// format, compared with testdata/NAME.FORMAT.golden (go test
// ./tools-src/web -update rewrites them; read the diff before committing).
func TestConvertGolden(t *testing.T) {
	cases := []struct {
		file, media, charset, url string
		formats                   []string
		wantTitle                 string
	}{
		{"article.html", "text/html", "utf-8", "https://blog.example.com/posts/wasm.html",
			[]string{"markdown", "text"}, "Sandboxing tools with WebAssembly"},
		{"latin1.html", "text/html", "iso-8859-1", "https://fr.example.com/cafe", []string{"markdown"}, "Café"},
		{"plain.txt", "text/plain", "", "https://example.com/plain.txt", []string{"markdown", "raw"}, ""},
	}
	for _, tc := range cases {
		body, err := os.ReadFile(filepath.Join("testdata", tc.file))
		if err != nil {
			t.Fatal(err)
		}
		for _, format := range tc.formats {
			t.Run(tc.file+"/"+format, func(t *testing.T) {
				got, title, _, err := convert(body, tc.media, tc.charset, tc.url, format)
				if err != nil {
					t.Fatal(err)
				}
				if !strings.HasPrefix(title, tc.wantTitle) {
					t.Errorf("title = %q, want %q", title, tc.wantTitle)
				}
				golden := filepath.Join("testdata", tc.file+"."+format+".golden")
				if *update {
					if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
						t.Fatal(err)
					}
				}
				want, err := os.ReadFile(golden)
				if err != nil {
					t.Fatalf("%v (run go test ./tools-src/web -update)", err)
				}
				if got != string(want) {
					t.Errorf("%s differs:\n--- got\n%s\n--- want\n%s", golden, got, want)
				}
			})
		}
	}
}

// TestMarkdownKeepsContentDropsChrome: what the golden file must show,
// stated, so that an -update cannot quietly accept a regression.
func TestMarkdownKeepsContentDropsChrome(t *testing.T) {
	body, _ := os.ReadFile(filepath.Join("testdata", "article.html"))
	md, _, _, err := convert(body, "text/html", "utf-8", "https://blog.example.com/posts/wasm.html", "markdown")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"## Why a fresh instance?",
		"[WebAssembly](https://blog.example.com/glossary/webassembly)",
		"[the WebAssembly specification](https://webassembly.org/)",
		"- No shared state between calls.",
		"toolhost call text_count",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q:\n%s", want, md)
		}
	}
	for _, unwanted := range []string{"tracker", "font-family", "Buy our product", "analytics.js", "Archive", "Privacy"} {
		if strings.Contains(md, unwanted) {
			t.Errorf("markdown keeps %q:\n%s", unwanted, md)
		}
	}
}

func TestWindow(t *testing.T) {
	content := "héllo wörld" // é and ö are two bytes each
	for _, tc := range []struct {
		start, max          int
		want                string
		truncated           bool
		next, reportedStart int
	}{
		{0, 100, "héllo wörld", false, 0, 0},
		{0, 2, "h", true, 1, 0},       // cut back before the é
		{2, 3, "él", true, 4, 1},      // start moved back onto the é
		{8, 100, "örld", false, 0, 8}, // 8 is the ö's first byte
		{13, 5, "", false, 0, 13},     // the end exactly
	} {
		var p page
		if err := p.window(content, tc.start, tc.max); err != nil {
			t.Fatal(err)
		}
		if p.Content != tc.want || p.Truncated != tc.truncated || p.NextIndex != tc.next || p.StartIndex != tc.reportedStart || p.TotalLength != len(content) {
			t.Errorf("window(%d, %d) = %+v", tc.start, tc.max, p)
		}
	}
	var p page
	if err := p.window(content, 14, 5); err == nil {
		t.Error("a start past the end was accepted")
	}
}

func TestReadable(t *testing.T) {
	for media, want := range map[string]bool{
		"text/html": true, "text/plain": true, "application/json": true, "application/ld+json": true,
		"application/atom+xml": true, "image/png": false, "application/pdf": false, "application/octet-stream": false, "": false,
	} {
		if readable(media) != want {
			t.Errorf("readable(%q) = %v", media, !want)
		}
	}
}

// TestArguments: what the schema refuses and what the tool refuses before
// any request (no network is used: these fail before egress).
func TestArguments(t *testing.T) {
	tooltest.Run(t, []tooltest.Case{
		{Name: "http refused", Tool: "web.fetch", Args: `{"url":"http://example.com/"}`, Kind: abi.KindSchema, Msg: "not an absolute https URL"},
		{Name: "relative refused", Tool: "web.fetch", Args: `{"url":"/just/a/path"}`, Kind: abi.KindSchema, Msg: "not an absolute https URL"},
		{Name: "unknown format", Tool: "web.fetch", Args: `{"url":"https://example.com/","format":"pdf"}`, Rejected: true},
		{Name: "max_bytes 0", Tool: "web.fetch", Args: `{"url":"https://example.com/","max_bytes":0}`, Rejected: true},
		{Name: "negative start", Tool: "web.fetch", Args: `{"url":"https://example.com/","start_index":-1}`, Rejected: true},
	})
}

func TestManifest(t *testing.T) {
	tooltest.CheckManifest(t, map[string]tooltest.Flags{
		"web.fetch":  {Idempotent: true, ReadOnly: true, TimeoutMS: 30000},
		"web.delete": {TimeoutMS: 30000},
	})
}

// TestDeepPageIsAnswered holds issue 20's finding: a page nested deeper
// than x/net/html's 512 open elements was refused as `schema`, the
// caller's argument error, though the caller's arguments were fine. It is
// answered as flat text with a note, for every HTML format.
func TestDeepPageIsAnswered(t *testing.T) {
	page := "<html><head><title>Deep</title><style>p{}</style></head><body><p>before</p>" +
		strings.Repeat("<div>", 600) + "inside<script>var x = 1;</script>" + strings.Repeat("</div>", 600) +
		"<p>after</p></body></html>"
	for _, format := range []string{"markdown", "text"} {
		got, title, note, err := convert([]byte(page), "text/html", "utf-8", "https://deep.example.com/", format)
		if err != nil {
			t.Fatalf("%s: %v", format, err)
		}
		if title != "Deep" || note != flatNote {
			t.Errorf("%s: title %q, note %q", format, title, note)
		}
		if got != "before\n\ninside\n\nafter\n" {
			t.Errorf("%s: content %q", format, got)
		}
	}
}
