// Command notes is a test fixture: a module that offers resources, a
// resource template and prompts beside one tool, through the Go SDK
// (guest.RegisterResource, RegisterResourceTemplate, RegisterPrompt), and
// some that misbehave (a read that never ends, one of the wrong shape),
// for the end-to-end tests of resources and prompts.
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -o notes.wasm ./host/testdata/notes
package main

import (
	"encoding/base64"
	"strings"

	"github.com/toolhost/toolhost/abi/guest"
	"github.com/toolhost/toolhost/abi/guest/abi"
)

type countArgs struct {
	Text string `json:"text"`
}

func text(uri, s string) []abi.ResourceContents {
	return []abi.ResourceContents{{URI: uri, MIMEType: "text/plain", Text: s}}
}

func init() {
	// Reads and gets time out after 2 s: notes://spin shows it.
	guest.SetTimeout(2000)
	guest.Register("notes.count", guest.Options{ReadOnly: true, Idempotent: true},
		func(a countArgs) (int, error) { return len(strings.Fields(a.Text)), nil })

	guest.RegisterResource(abi.Resource{URI: "notes://todo", Name: "todo", Title: "To do", MIMEType: "text/plain"},
		func(uri string) ([]abi.ResourceContents, error) { return text(uri, "buy milk\nwrite tests\n"), nil })
	guest.RegisterResource(abi.Resource{URI: "notes://logo", Name: "logo", MIMEType: "image/png"},
		func(uri string) ([]abi.ResourceContents, error) {
			return []abi.ResourceContents{{URI: uri, MIMEType: "image/png", Blob: base64.StdEncoding.EncodeToString([]byte("\x89PNG"))}}, nil
		})
	guest.RegisterResource(abi.Resource{URI: "notes://secret/plan", Name: "plan"},
		func(uri string) ([]abi.ResourceContents, error) { return text(uri, "the secret plan"), nil })
	guest.RegisterResource(abi.Resource{URI: "notes://spin", Name: "spin", Description: "never finishes"},
		func(uri string) ([]abi.ResourceContents, error) {
			for n := 0; ; n++ {
				if n < 0 {
					return nil, nil
				}
			}
		})
	guest.RegisterResource(abi.Resource{URI: "notes://bad", Name: "bad", Description: "reads as nothing"},
		func(uri string) ([]abi.ResourceContents, error) { return nil, nil })
	guest.RegisterResourceTemplate(abi.ResourceTemplate{URITemplate: "notes://day/{date}", Name: "day", MIMEType: "text/plain"},
		func(uri string) ([]abi.ResourceContents, error) {
			return text(uri, "notes of "+strings.TrimPrefix(uri, "notes://day/")), nil
		})

	guest.RegisterPrompt(abi.Prompt{Name: "review", Description: "Review code",
		Arguments: []abi.PromptArgument{{Name: "lang", Required: true}}},
		func(args map[string]string) (abi.GetPromptResult, error) {
			return abi.GetPromptResult{Description: "review in " + args["lang"], Messages: []abi.PromptMessage{
				{Role: "user", Content: map[string]any{"type": "text", "text": "Review this " + args["lang"] + " code."}}}}, nil
		})
	guest.RegisterPrompt(abi.Prompt{Name: "secret-prompt"},
		func(map[string]string) (abi.GetPromptResult, error) {
			return abi.GetPromptResult{Messages: []abi.PromptMessage{{Role: "user", Content: map[string]any{"type": "text", "text": "secret"}}}}, nil
		})
}

func main() {}
