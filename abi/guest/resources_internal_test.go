package guest

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/toolhost/toolhost/abi/guest/abi"
)

func TestMatchTemplate(t *testing.T) {
	for _, tt := range []struct {
		tmpl, uri string
		want      bool
	}{
		{"notes://{name}", "notes://todo", true},
		{"notes://{name}", "notes://a/b", false},
		{"notes://{+path}", "notes://a/b", true},
		{"notes://{name}.md", "notes://todo.md", true},
		{"notes://{name}.md", "notes://todo.txt", false},
		{"notes://{a}/{b}", "notes://x/y", true},
		{"notes://{a}/{b}", "files://x/y", false},
		{"notes://fixed", "notes://fixed", true},
	} {
		if got := matchTemplate(tt.tmpl, tt.uri); got != tt.want {
			t.Errorf("matchTemplate(%q, %q) = %v, want %v", tt.tmpl, tt.uri, got, tt.want)
		}
	}
}

// Resources and prompts are listed in the manifest and served under the
// reserved call names.
func TestOffersDispatch(t *testing.T) {
	saved := [...]any{resources, templates, prompts, dynamic}
	t.Cleanup(func() {
		resources, templates, prompts, dynamic = saved[0].([]resource), saved[1].([]template), saved[2].([]prompt), saved[3].(*Dynamic)
		manifest = nil
	})
	SetDynamic(Dynamic{
		List: func() (abi.Listing, error) {
			return abi.Listing{Resources: []abi.Resource{{URI: "memo://a", Name: "a"}}}, nil
		},
		Read: func(uri string) ([]abi.ResourceContents, error) {
			return []abi.ResourceContents{{URI: uri, Text: "memo"}}, nil
		},
	})
	RegisterResource(abi.Resource{URI: "notes://todo", Name: "todo", MIMEType: "text/plain"},
		func(uri string) ([]abi.ResourceContents, error) {
			return []abi.ResourceContents{{URI: uri, MIMEType: "text/plain", Text: "buy milk"}}, nil
		})
	RegisterResourceTemplate(abi.ResourceTemplate{URITemplate: "notes://day/{date}", Name: "day"},
		func(uri string) ([]abi.ResourceContents, error) {
			return []abi.ResourceContents{{URI: uri, Text: "day " + strings.TrimPrefix(uri, "notes://day/")}}, nil
		})
	RegisterPrompt(abi.Prompt{Name: "greet", Arguments: []abi.PromptArgument{{Name: "who", Required: true}}},
		func(args map[string]string) (abi.GetPromptResult, error) {
			return abi.GetPromptResult{Messages: []abi.PromptMessage{{Role: "user", Content: map[string]any{"type": "text", "text": "hello " + args["who"]}}}}, nil
		})
	m, err := abi.ParseManifest(Manifest())
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Resources) != 1 || len(m.ResourceTemplates) != 1 || len(m.Prompts) != 1 || !m.DynamicOffers {
		t.Fatalf("manifest offers %+v %+v %+v", m.Resources, m.ResourceTemplates, m.Prompts)
	}
	for _, tt := range []struct{ name, args, want string }{
		{abi.CallReadResource, `{"uri":"notes://todo"}`, `{"result":{"contents":[{"uri":"notes://todo","mimeType":"text/plain","text":"buy milk"}]}}`},
		{abi.CallReadResource, `{"uri":"notes://day/2026-12-02"}`, `{"result":{"contents":[{"uri":"notes://day/2026-12-02","text":"day 2026-12-02"}]}}`},
		{abi.CallReadResource, `{"uri":"memo://a"}`, `{"result":{"contents":[{"uri":"memo://a","text":"memo"}]}}`},
		{abi.CallListOffers, `{}`, `{"result":{"resources":[{"uri":"memo://a","name":"a"}]}}`},
		{abi.CallGetPrompt, `{"name":"greet","arguments":{"who":"ada"}}`, `{"result":{"messages":[{"role":"user","content":{"text":"hello ada","type":"text"}}]}}`},
		{abi.CallGetPrompt, `{"name":"other"}`, `{"error":{"kind":"schema","message":"this module has no prompt \"other\""}}`},
	} {
		got := Dispatch(tt.name, []byte(tt.args))
		var a, b any
		_ = json.Unmarshal(got, &a)
		_ = json.Unmarshal([]byte(tt.want), &b)
		ga, _ := json.Marshal(a)
		gb, _ := json.Marshal(b)
		if string(ga) != string(gb) {
			t.Errorf("Dispatch(%s, %s) = %s, want %s", tt.name, tt.args, got, tt.want)
		}
	}
}
