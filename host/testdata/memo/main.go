// Command memo is a test fixture: a module whose resources and prompt are
// listed by code (guest.SetDynamic, "dynamic_offers" in its manifest)
// rather than in its manifest, for the end-to-end tests of resources and
// prompts.
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -o memo.wasm ./host/testdata/memo
package main

import (
	"github.com/toolhost/toolhost/abi/guest"
	"github.com/toolhost/toolhost/abi/guest/abi"
)

type echoArgs struct {
	Text string `json:"text"`
}

var memos = map[string]string{"memo://monday": "standup at 9", "memo://friday": "demo at 4"}

func init() {
	guest.Register("memo.echo", guest.Options{ReadOnly: true},
		func(a echoArgs) (string, error) { return a.Text, nil })
	guest.SetDynamic(guest.Dynamic{
		List: func() (abi.Listing, error) {
			var l abi.Listing
			for _, uri := range []string{"memo://friday", "memo://monday"} {
				l.Resources = append(l.Resources, abi.Resource{URI: uri, Name: uri[len("memo://"):], MIMEType: "text/plain"})
			}
			l.Prompts = []abi.Prompt{{Name: "memo-summary", Description: "Summarise the memos"}}
			return l, nil
		},
		Read: func(uri string) ([]abi.ResourceContents, error) {
			text, ok := memos[uri]
			if !ok {
				return nil, guest.Schemaf("no memo %q", uri)
			}
			return []abi.ResourceContents{{URI: uri, MIMEType: "text/plain", Text: text}}, nil
		},
		Get: func(name string, _ map[string]string) (abi.GetPromptResult, error) {
			return abi.GetPromptResult{Messages: []abi.PromptMessage{
				{Role: "user", Content: map[string]any{"type": "text", "text": "Summarise: " + memos["memo://monday"] + "; " + memos["memo://friday"]}}}}, nil
		},
	})
}

func main() {}
