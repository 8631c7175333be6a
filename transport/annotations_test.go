package transport_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolhost/toolhost/abi"
	"github.com/toolhost/toolhost/dispatcher"
	"github.com/toolhost/toolhost/registry"
	"github.com/toolhost/toolhost/transport"
)

// listOver serves reg (and toolhost.plan) and lists it with the SDK client,
// by manifest name.
func listOver(t *testing.T, reg *registry.Registry) map[string]*mcp.Tool {
	t.Helper()
	srv := transport.New(dispatcher.New(reg, dispatcher.Config{}), reg, transport.Options{
		Logger: slog.New(slog.DiscardHandler), Plans: &transport.PlanOptions{}})
	ct, st := mcp.NewInMemoryTransports()
	ss, err := srv.Connect(t.Context(), st)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "annotations-test", Version: "v0"}, nil).Connect(t.Context(), ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cs.Close()
		ss.Wait()
	})
	res, err := cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]*mcp.Tool{} // by manifest name
	for _, tl := range res.Tools {
		name, _ := tl.Meta[transport.MetaToolName].(string)
		byName[name] = tl
	}
	return byName
}

// Annotations tell the truth: destructiveHint and openWorldHint come from
// the record (the manifest and the module's egress grant), icons pass
// through.
func TestListAnnotations(t *testing.T) {
	ok := registry.HandlerFunc(func(context.Context, json.RawMessage) (json.RawMessage, error) { return json.RawMessage(`{}`), nil })
	obj := json.RawMessage(`{"type":"object"}`)
	icon := abi.Icon{Src: "https://example.com/a.png", MIMEType: "image/png", Sizes: []string{"48x48"}, Theme: "dark"}
	reg, err := registry.New([]*registry.Tool{
		{Name: "r.read", InputSchema: obj, Timeout: time.Second, Handler: ok, ReadOnly: true},
		{Name: "w.append", InputSchema: obj, Timeout: time.Second, Handler: ok, OpenWorld: true, Icons: []abi.Icon{icon}},
		{Name: "w.delete", InputSchema: obj, Timeout: time.Second, Handler: ok, Destructive: true},
	})
	if err != nil {
		t.Fatal(err)
	}
	tools := listOver(t, reg)
	want := map[string]struct{ ro, destructive, openWorld bool }{
		"r.read":   {true, false, false},
		"w.append": {false, false, true},
		"w.delete": {false, true, false},
	}
	for name, w := range want {
		a := tools[name].Annotations
		if a == nil || a.DestructiveHint == nil || a.OpenWorldHint == nil {
			t.Errorf("%s: annotations %+v, want every hint set", name, a)
			continue
		}
		if a.ReadOnlyHint != w.ro || *a.DestructiveHint != w.destructive || *a.OpenWorldHint != w.openWorld {
			t.Errorf("%s: readOnly %v destructive %v openWorld %v, want %+v", name, a.ReadOnlyHint, *a.DestructiveHint, *a.OpenWorldHint, w)
		}
	}
	icons := tools["w.append"].Icons
	if len(icons) != 1 || icons[0].Source != icon.Src || icons[0].MIMEType != icon.MIMEType ||
		len(icons[0].Sizes) != 1 || icons[0].Sizes[0] != "48x48" || icons[0].Theme != mcp.IconThemeDark {
		t.Errorf("icons %+v, want %+v", icons, icon)
	}
	if len(tools["r.read"].Icons) != 0 {
		t.Errorf("r.read has icons %+v", tools["r.read"].Icons)
	}
}

// Whatever a record was built with, the client is served object schemas
// only: the json.get shape ({"value": true}) that made the TypeScript SDK
// refuse the whole list, and toolhost.plan's own schema.
func TestListServesObjectSchemas(t *testing.T) {
	ok := registry.HandlerFunc(func(context.Context, json.RawMessage) (json.RawMessage, error) { return json.RawMessage(`{}`), nil })
	reg, err := registry.New([]*registry.Tool{{
		Name: "json.get", Timeout: time.Second, Handler: ok,
		InputSchema:  json.RawMessage(`{"type":"object","properties":{"doc":true,"pointer":{"type":"string"}},"additionalProperties":false}`),
		OutputSchema: json.RawMessage(`{"type":"object","properties":{"value":true},"required":["value"],"additionalProperties":false}`),
	}})
	if err != nil {
		t.Fatal(err)
	}
	tools := listOver(t, reg)
	if len(tools) != 2 {
		t.Fatalf("listed %d tools, want json.get and toolhost.plan", len(tools))
	}
	for name, tl := range tools {
		assertObjectSchema(t, name+" input", tl.InputSchema)
		if tl.OutputSchema != nil {
			assertObjectSchema(t, name+" output", tl.OutputSchema)
		}
	}
	if tools["json.get"].OutputSchema == nil {
		t.Error("json.get lost its output schema")
	}
}

// assertObjectSchema fails unless schema, as a client received it, is an
// object schema with "type": "object" and no boolean subschema.
func assertObjectSchema(t *testing.T, what string, schema any) {
	t.Helper()
	b, err := json.Marshal(schema)
	if err != nil {
		t.Fatal(err)
	}
	var top map[string]any
	if err := json.Unmarshal(b, &top); err != nil || top["type"] != "object" {
		t.Errorf("%s schema %s is not an object schema", what, b)
	}
	if p, found := abi.FirstBooleanPropertySchema(b); found {
		t.Errorf("%s schema has a boolean subschema at %s: %s", what, p, b)
	}
}
