// Command plugin is text.count as an Extism plugin (go-pdk): the same
// JSON in, the same counting, the same JSON out as tools-src/text, so the
// per-call benchmark compares the two hosts on equivalent work.
package main

import (
	"encoding/json"
	"strings"
	"unicode/utf8"

	"github.com/extism/go-pdk"
)

type countArgs struct {
	Text string `json:"text"`
}

type counts struct {
	Words int `json:"words"`
	Lines int `json:"lines"`
	Runes int `json:"runes"`
	Bytes int `json:"bytes"`
}

//go:wasmexport count
func count() int32 {
	var a countArgs
	if err := json.Unmarshal(pdk.Input(), &a); err != nil {
		pdk.SetError(err)
		return 1
	}
	lines := strings.Count(a.Text, "\n")
	if a.Text != "" && !strings.HasSuffix(a.Text, "\n") {
		lines++
	}
	out, _ := json.Marshal(counts{
		Words: len(strings.Fields(a.Text)),
		Lines: lines,
		Runes: utf8.RuneCountInString(a.Text),
		Bytes: len(a.Text),
	})
	pdk.Output(out)
	return 0
}

func main() {}
