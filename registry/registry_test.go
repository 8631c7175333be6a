package registry_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/toolhost/toolhost/registry"
)

var okHandler = registry.HandlerFunc(func(context.Context, json.RawMessage) (json.RawMessage, error) {
	return json.RawMessage(`{}`), nil
})

func newTool(name, schema string) *registry.Tool {
	return &registry.Tool{Name: name, InputSchema: json.RawMessage(schema), Timeout: time.Second, Handler: okHandler}
}

func TestNewAndLookup(t *testing.T) {
	names := []string{"text.count", "a", "Z.upper", "hash.sha256", "_x", "a.b"}
	var tools []*registry.Tool
	for _, n := range names {
		tools = append(tools, newTool(n, `{"type":"object"}`))
	}
	reg, err := registry.New(tools)
	if err != nil {
		t.Fatal(err)
	}
	for i, n := range names {
		got, ok := reg.Lookup(n)
		if !ok || got != tools[i] {
			t.Errorf("Lookup(%q) = %p, %v; want %p", n, got, ok, tools[i])
		}
	}
	for _, n := range []string{"", "text", "TEXT.COUNT", "text.count "} {
		if got, ok := reg.Lookup(n); ok || got != nil {
			t.Errorf("Lookup(%q) = %v, %v", n, got, ok)
		}
	}
	var listed []string
	for _, tl := range reg.List() {
		listed = append(listed, tl.Name)
	}
	want := []string{"Z.upper", "_x", "a", "a.b", "hash.sha256", "text.count"} // byte order
	if strings.Join(listed, " ") != strings.Join(want, " ") {
		t.Errorf("List() = %v, want %v", listed, want)
	}
}

func TestNewEmpty(t *testing.T) {
	for _, tools := range [][]*registry.Tool{nil, {}} {
		reg, err := registry.New(tools)
		if err != nil {
			t.Fatal(err)
		}
		if len(reg.List()) != 0 {
			t.Errorf("List() = %v", reg.List())
		}
		if _, ok := reg.Lookup("x"); ok {
			t.Error("Lookup on an empty registry found a tool")
		}
	}
}

func TestNewErrors(t *testing.T) {
	nilHandler := newTool("nohandler", `{"type":"object"}`)
	nilHandler.Handler = nil
	tests := []struct {
		name  string
		tools []*registry.Tool
		want  []string
	}{
		{"duplicate", []*registry.Tool{newTool("dup", `{"type":"object"}`), newTool("x", `{"type":"object"}`), newTool("dup", `{"type":"object"}`)},
			[]string{`"dup"`, "twice"}},
		{"nil handler", []*registry.Tool{nilHandler}, []string{`"nohandler"`, "no handler"}},
		{"schema not JSON", []*registry.Tool{newTool("bad", `{"type":`)}, []string{`"bad"`, "not valid JSON"}},
		{"schema true", []*registry.Tool{newTool("yes", `true`)}, []string{`"yes"`, "cannot be served to MCP clients: at /: a schema must be a JSON object"}},
		{"property a number", []*registry.Tool{newTool("num", `{"type":"object","properties":{"a":{"items":7}}}`)},
			[]string{`tool "num": input schema cannot be served to MCP clients: at /properties/a/items: a subschema must be a JSON object or a boolean, got a number`}},
		{"output property a string", []*registry.Tool{withOutput(newTool("out", `{"type":"object"}`), `{"type":"object","properties":{"a":"string"}}`)},
			[]string{`tool "out": output schema cannot be served to MCP clients: at /properties/a: a subschema must be a JSON object or a boolean, got a string`}},
		{"output does not compile", []*registry.Tool{withOutput(newTool("outc", `{"type":"object"}`), `{"type":"object","required":"a"}`)},
			[]string{`tool "outc": output schema does not compile`}},
		{"schema empty", []*registry.Tool{newTool("empty", ``)}, []string{`"empty"`}},
		{"schema trailing data", []*registry.Tool{newTool("trail", `{"type":"object"} {}`)}, []string{`"trail"`}},
		{"type not a type", []*registry.Tool{newTool("badtype", `{"type":"objekt"}`)}, []string{`"badtype"`, "does not compile"}},
		{"required not array", []*registry.Tool{newTool("req", `{"type":"object","required":"a"}`)}, []string{`"req"`, "does not compile"}},
		{"bad pattern", []*registry.Tool{newTool("pat", `{"type":"object","properties":{"a":{"pattern":"("}}}`)}, []string{`"pat"`}},
		{"dangling local ref", []*registry.Tool{newTool("dangle", `{"type":"object","properties":{"a":{"$ref":"#/$defs/nope"}}}`)}, []string{`"dangle"`}},
		{"external file ref", []*registry.Tool{newTool("file", `{"$ref":"file:///etc/passwd"}`)}, []string{`"file"`, "does not compile"}},
		{"external file ref nested", []*registry.Tool{newTool("file2", `{"type":"object","properties":{"a":{"$ref":"file:///etc/hostname"}}}`)}, []string{`"file2"`}},
		{"external http ref", []*registry.Tool{newTool("net", `{"type":"object","properties":{"a":{"$ref":"http://127.0.0.1:1/schema.json"}}}`)}, []string{`"net"`}},
		{"external https ref", []*registry.Tool{newTool("net2", `{"$ref":"https://example.com/s.json"}`)}, []string{`"net2"`}},
		{"relative ref", []*registry.Tool{newTool("rel", `{"$ref":"other.json"}`)}, []string{`"rel"`}},
		{"unknown $schema", []*registry.Tool{newTool("meta", `{"$schema":"http://example.com/my-meta","type":"object"}`)}, []string{`"meta"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			reg, err := registry.New(tt.tools)
			if err == nil {
				t.Fatalf("New succeeded: %v", reg.List())
			}
			if reg != nil {
				t.Errorf("New returned a registry with error %v", err)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
		})
	}
}

// An external reference must be refused by the loader, not merely fail
// to load: the error says so, whatever is at the other end.
func TestExternalRefRefused(t *testing.T) {
	for _, ref := range []string{"file:///etc/passwd", "http://127.0.0.1:1/x.json", "https://example.com/x.json"} {
		_, err := registry.New([]*registry.Tool{newTool("t", fmt.Sprintf(`{"type":"object","properties":{"a":{"$ref":%q}}}`, ref))})
		if err == nil {
			t.Errorf("%s: compiled", ref)
			continue
		}
		if !strings.Contains(err.Error(), "external schema references are not allowed") {
			t.Errorf("%s: error %q does not say external references are refused", ref, err)
		}
	}
}

// Schemas that stay inside the document compile: local $ref, $defs, and the
// 2020-12 meta-schema named explicitly (built in, not fetched).
func TestNewLocalSchemaFeatures(t *testing.T) {
	schemas := []string{
		`{"type":"object","$defs":{"s":{"type":"string"}},"properties":{"a":{"$ref":"#/$defs/s"}}}`,
		`{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object"}`,
		`{"$id":"https://example.com/tool","type":"object","properties":{"a":{"$ref":"#/$defs/n"}},"$defs":{"n":{"type":"number"}}}`,
		`{}`,
	}
	for _, s := range schemas {
		if _, err := registry.New([]*registry.Tool{newTool("t", s)}); err != nil {
			t.Errorf("%s: %v", s, err)
		}
	}
}

func TestHandlerFunc(t *testing.T) {
	var got json.RawMessage
	h := registry.HandlerFunc(func(_ context.Context, args json.RawMessage) (json.RawMessage, error) {
		got = args
		return json.RawMessage(`"done"`), errors.New("and an error")
	})
	res, err := h.Handle(context.Background(), json.RawMessage(`{"a":1}`))
	if string(got) != `{"a":1}` || string(res) != `"done"` || err == nil || err.Error() != "and an error" {
		t.Errorf("Handle = %s, %v (args seen %s)", res, err, got)
	}
}

func withOutput(t *registry.Tool, schema string) *registry.Tool {
	t.OutputSchema = json.RawMessage(schema)
	return t
}

// New serves what every MCP client accepts: the records' schemas are in
// normal form afterwards, whatever the record was built with.
func TestNewNormalizesSchemas(t *testing.T) {
	tl := withOutput(newTool("json.get", `{"type":"object","properties":{"doc":true},"additionalProperties":false}`),
		`{"type":"object","properties":{"value":true},"required":["value"]}`)
	if _, err := registry.New([]*registry.Tool{tl}); err != nil {
		t.Fatal(err)
	}
	if got := string(tl.InputSchema); got != `{"type":"object","properties":{"doc":{}},"additionalProperties":false}` {
		t.Errorf("input schema %s", got)
	}
	if got := string(tl.OutputSchema); got != `{"type":"object","properties":{"value":{}},"required":["value"]}` {
		t.Errorf("output schema %s", got)
	}
	// Validation keeps the messages of the schema as written.
	err := tl.Validate([]byte(`{"doc":1,"extra":2}`))
	if err == nil || !strings.Contains(err.Error(), "additional properties 'extra' not allowed") {
		t.Errorf("Validate: %v", err)
	}
}
