// Command sdkcount is a benchmark fixture: text.count (tools-src/text)
// alone, built with the Go SDK (abi/guest), so that host's BenchmarkFresh
// compares the SDK with the hand-written reactor in ../minimal on exactly
// the same work and nothing else. It is never linked into the server.
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -o sdkcount.wasm ./host/testdata/sdkcount
package main

import (
	"strings"
	"unicode/utf8"

	"github.com/toolhost/toolhost/abi/guest"
)

type countArgs struct {
	Text string `json:"text" jsonschema:"description=the text to measure"`
}

type counts struct {
	Words int `json:"words"`
	Lines int `json:"lines"`
	Runes int `json:"runes"`
	Bytes int `json:"bytes"`
}

func init() {
	guest.Register("text.count", guest.Options{Idempotent: true, ReadOnly: true}, func(a countArgs) (counts, error) {
		lines := strings.Count(a.Text, "\n")
		if a.Text != "" && !strings.HasSuffix(a.Text, "\n") {
			lines++
		}
		return counts{len(strings.Fields(a.Text)), lines, utf8.RuneCountInString(a.Text), len(a.Text)}, nil
	})
}

func main() {}
