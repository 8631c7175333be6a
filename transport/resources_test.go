package transport_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolhost/toolhost/abi"
	"github.com/toolhost/toolhost/dispatcher"
	"github.com/toolhost/toolhost/registry"
	"github.com/toolhost/toolhost/transport"
)

// echoRead answers a read with the URI it was asked for.
var echoRead = registry.HandlerFunc(func(_ context.Context, args json.RawMessage) (json.RawMessage, error) {
	var a abi.ReadResourceArgs
	if err := json.Unmarshal(args, &a); err != nil {
		return nil, err
	}
	return json.Marshal(abi.ReadResourceResult{Contents: []abi.ResourceContents{{URI: a.URI, Text: "read " + a.URI}}})
})

func offering(h registry.Handler) registry.Offering {
	return registry.Offering{Module: registry.Module{Path: "plugins/x.wasm"}, Handler: h, Timeout: time.Second}
}

func withOffers(t *testing.T, reg *registry.Registry, o registry.Offers) *registry.Registry {
	t.Helper()
	out, err := reg.WithOffers(o)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// SetTools lists a registry's resources, templates and prompts through the
// SDK; reads and gets run their handlers; a later SetTools changes what is
// listed and clients hear of it; an entry the SDK refuses costs that entry,
// not the server.
func TestOffersServedAndSwapped(t *testing.T) {
	var f fakes
	tools := f.registry(t)
	prompt := registry.HandlerFunc(func(_ context.Context, args json.RawMessage) (json.RawMessage, error) {
		var a abi.GetPromptArgs
		_ = json.Unmarshal(args, &a)
		return json.Marshal(abi.GetPromptResult{Messages: []abi.PromptMessage{{Role: "user", Content: map[string]any{"type": "text", "text": "hi " + a.Arguments["who"]}}}})
	})
	reg := withOffers(t, tools, registry.Offers{
		Resources: []*registry.Resource{{Resource: abi.Resource{URI: "x://a", Name: "a"}, Offering: offering(echoRead)}},
		Templates: []*registry.ResourceTemplate{{ResourceTemplate: abi.ResourceTemplate{URITemplate: "x://t/{id}", Name: "t"}, Offering: offering(echoRead)}},
		Prompts:   []*registry.Prompt{{Prompt: abi.Prompt{Name: "p", Arguments: []abi.PromptArgument{{Name: "who"}}}, Offering: offering(prompt)}},
	})
	srv := transport.New(dispatcher.New(reg, dispatcher.Config{}), reg, transport.Options{Version: "test", Logger: slog.New(slog.DiscardHandler)})
	ct, st := mcp.NewInMemoryTransports()
	ss, err := srv.MCP().Connect(t.Context(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	changed := make(chan struct{}, 8)
	c := mcp.NewClient(&mcp.Implementation{Name: "offers-test", Version: "v0"}, &mcp.ClientOptions{
		ResourceListChangedHandler: func(context.Context, *mcp.ResourceListChangedRequest) { changed <- struct{}{} },
	})
	cs, err := c.Connect(t.Context(), ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close(); ss.Wait() })

	if caps := cs.InitializeResult().Capabilities; caps.Resources == nil || caps.Prompts == nil {
		t.Fatalf("capabilities %+v", caps)
	}
	r, err := cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: "x://t/42"})
	if err != nil || r.Contents[0].Text != "read x://t/42" || r.Meta["toolhost/request_id"] == nil {
		t.Errorf("read through the template: %+v, %v", r, err)
	}
	p, err := cs.GetPrompt(t.Context(), &mcp.GetPromptParams{Name: "p", Arguments: map[string]string{"who": "ada"}})
	if err != nil || p.Messages[0].Content.(*mcp.TextContent).Text != "hi ada" {
		t.Errorf("get: %+v, %v", p, err)
	}
	list, err := cs.ListResources(t.Context(), nil)
	if err != nil || len(list.Resources) != 1 || list.Resources[0].Meta["toolhost/module"] == nil {
		t.Fatalf("resources/list = %+v, %v", list, err)
	}

	// A reload: x://a goes, x://b comes, and a template the SDK's parser
	// refuses (the loader's checks would have) is skipped.
	srv.SetTools(withOffers(t, tools, registry.Offers{
		Resources: []*registry.Resource{{Resource: abi.Resource{URI: "x://b", Name: "b"}, Offering: offering(echoRead)}},
		Templates: []*registry.ResourceTemplate{{ResourceTemplate: abi.ResourceTemplate{URITemplate: "x://{", Name: "bad"}, Offering: offering(echoRead)}},
	}))
	for {
		list, err = cs.ListResources(t.Context(), nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(list.Resources) == 1 && list.Resources[0].URI == "x://b" {
			break
		}
		<-changed
	}
	if _, err := cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: "x://a"}); err == nil {
		t.Error("a resource gone with the reload was read")
	}
	if tpl, err := cs.ListResourceTemplates(t.Context(), nil); err != nil || len(tpl.ResourceTemplates) != 0 {
		t.Errorf("templates after the reload: %+v, %v", tpl, err)
	}
	if _, err := cs.GetPrompt(t.Context(), &mcp.GetPromptParams{Name: "p"}); err == nil || !strings.Contains(err.Error(), "prompt") {
		t.Errorf("a prompt gone with the reload: %v", err)
	}
}
