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
	out, _ := json.Marshal(countText(a.Text))
	pdk.Output(out)
	return 0
}

func countText(text string) counts {
	lines := strings.Count(text, "\n")
	if text != "" && !strings.HasSuffix(text, "\n") {
		lines++
	}
	return counts{
		Words: len(strings.Fields(text)),
		Lines: lines,
		Runes: utf8.RuneCountInString(text),
		Bytes: len(text),
	}
}

// list_tools and call_tool are the same counting behind hyper-mcp's v2
// interface, as toolhost serves Extism plugins (docs/WRITING-EXTISM.md).
//
//go:wasmexport list_tools
func listTools() int32 {
	pdk.OutputString(`{"tools":[{"name":"text.count","inputSchema":{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}}]}`)
	return 0
}

//go:wasmexport call_tool
func callTool() int32 {
	var in struct {
		Request struct {
			Name      string    `json:"name"`
			Arguments countArgs `json:"arguments"`
		} `json:"request"`
	}
	if err := json.Unmarshal(pdk.Input(), &in); err != nil {
		pdk.SetError(err)
		return 1
	}
	c := countText(in.Request.Arguments.Text)
	text, _ := json.Marshal(c)
	out, _ := json.Marshal(map[string]any{"content": []any{map[string]any{"type": "text", "text": string(text)}}, "structuredContent": c})
	pdk.Output(out)
	return 0
}

func main() {}
