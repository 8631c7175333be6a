package abi_test

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/toolhost/toolhost/abi"
)

// tool returns a manifest tool object with the given extra fields spliced
// in after the name and a valid input schema.
func tool(name string, extra ...string) string {
	fields := []string{`"name":` + quote(name), `"input_schema":{"type":"object"}`}
	return "{" + strings.Join(append(fields, extra...), ",") + "}"
}

func manifest(top string, tools ...string) string {
	if top != "" {
		top += ","
	}
	return `{"abi":1,` + top + `"tools":[` + strings.Join(tools, ",") + `]}`
}

func quote(s string) string {
	b, err := json.Marshal(s)
	if err != nil {
		panic(err)
	}
	return string(b)
}

func TestParseManifestValid(t *testing.T) {
	doc := `{
	  "abi": 1,
	  "tools": [{
	    "name": "text.count",
	    "title": "Count words",
	    "description": "Counts words and lines in a text.",
	    "input_schema": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
	    "output_schema": {"type": "object"},
	    "timeout_ms": 2000,
	    "idempotent": true,
	    "read_only": true
	  }, {
	    "name": "text.upper",
	    "input_schema": {"type" : "object"}
	  }]
	}` + "\n\t "
	m, err := abi.ParseManifest([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	if m.ABI != 1 || len(m.Tools) != 2 {
		t.Fatalf("ABI %d, %d tools", m.ABI, len(m.Tools))
	}
	got := m.Resolve()
	want := []abi.Tool{{
		Name:         "text.count",
		Title:        "Count words",
		Description:  "Counts words and lines in a text.",
		InputSchema:  m.Tools[0].InputSchema,
		OutputSchema: m.Tools[0].OutputSchema,
		TimeoutMS:    2000,
		Idempotent:   true,
		ReadOnly:     true,
		Instances:    abi.InstancesFresh,
	}, {
		Name:        "text.upper",
		InputSchema: m.Tools[1].InputSchema,
		TimeoutMS:   abi.DefaultTimeoutMS,
		Destructive: true, // MCP's default for a tool that is not read-only
		Instances:   abi.InstancesFresh,
	}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Resolve() =\n%+v\nwant\n%+v", got, want)
	}
	var schema map[string]any
	if err := json.Unmarshal(got[0].InputSchema, &schema); err != nil || schema["required"] == nil {
		t.Errorf("input schema not kept intact: %s (%v)", got[0].InputSchema, err)
	}
	if got[1].OutputSchema != nil {
		t.Errorf("absent output schema resolved to %q", got[1].OutputSchema)
	}
}

func TestResolveDefaults(t *testing.T) {
	type flags struct {
		timeout              int
		idempotent, readOnly bool
	}
	tests := []struct {
		name string
		top  string
		tool string
		want flags
	}{
		{"abi defaults", "", tool("t"), flags{abi.DefaultTimeoutMS, false, false}},
		{"module defaults inherited", `"timeout_ms":5000,"idempotent":true,"read_only":true`, tool("t"),
			flags{5000, true, true}},
		{"tool overrides module", `"timeout_ms":5000,"idempotent":true,"read_only":true`,
			tool("t", `"timeout_ms":100`, `"idempotent":false`, `"read_only":false`), flags{100, false, false}},
		{"tool sets, module silent", "", tool("t", `"timeout_ms":7`, `"idempotent":true`, `"read_only":true`),
			flags{7, true, true}},
		{"mixed: only timeout overridden", `"timeout_ms":5000,"idempotent":true`, tool("t", `"timeout_ms":250`),
			flags{250, true, false}},
		{"mixed: only read_only overridden", `"read_only":true,"idempotent":true`, tool("t", `"read_only":false`),
			flags{abi.DefaultTimeoutMS, true, false}},
		{"null means unset", `"timeout_ms":null,"idempotent":true`, tool("t", `"idempotent":null`, `"timeout_ms":null`),
			flags{abi.DefaultTimeoutMS, true, false}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := abi.ParseManifest([]byte(manifest(tt.top, tt.tool)))
			if err != nil {
				t.Fatal(err)
			}
			r := m.Resolve()
			if len(r) != 1 {
				t.Fatalf("%d tools", len(r))
			}
			got := flags{r[0].TimeoutMS, r[0].Idempotent, r[0].ReadOnly}
			if got != tt.want {
				t.Errorf("resolved %+v, want %+v", got, tt.want)
			}
		})
	}
}

// Each tool resolves on its own: one tool's override does not leak into
// its neighbours, and the module defaults stay as they were.
func TestResolvePerTool(t *testing.T) {
	doc := manifest(`"timeout_ms":5000,"idempotent":true`,
		tool("a"),
		tool("b", `"timeout_ms":10`, `"idempotent":false`, `"read_only":true`),
		tool("c"))
	m, err := abi.ParseManifest([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	r := m.Resolve()
	type got struct {
		name string
		ms   int
		idem bool
		ro   bool
	}
	var gs []got
	for _, tl := range r {
		gs = append(gs, got{tl.Name, tl.TimeoutMS, tl.Idempotent, tl.ReadOnly})
	}
	want := []got{{"a", 5000, true, false}, {"b", 10, false, true}, {"c", 5000, true, false}}
	if !reflect.DeepEqual(gs, want) {
		t.Errorf("Resolve() = %+v, want %+v", gs, want)
	}
	if *m.TimeoutMS != 5000 || !*m.Idempotent || m.ReadOnly != nil {
		t.Errorf("module defaults changed by Resolve: %v %v %v", *m.TimeoutMS, *m.Idempotent, m.ReadOnly)
	}
}

func TestParseManifestInvalid(t *testing.T) {
	long := strings.Repeat("n", abi.MaxToolNameLen+1)
	tests := []struct {
		name string
		doc  string
		want []string // substrings of the error
	}{
		{"abi 0", `{"abi":0,"tools":[` + tool("t") + `]}`, []string{"abi is 0"}},
		{"abi 2", `{"abi":2,"tools":[` + tool("t") + `]}`, []string{"abi is 2", "speaks 1"}},
		{"abi missing", `{"tools":[` + tool("t") + `]}`, []string{"abi is 0"}},
		{"abi string", `{"abi":"1","tools":[` + tool("t") + `]}`, []string{"not valid JSON"}},
		{"abi float", `{"abi":1.5,"tools":[` + tool("t") + `]}`, []string{"not valid JSON"}},
		{"no tools", manifest(""), []string{"no tools"}},
		{"tools missing", `{"abi":1}`, []string{"no tools"}},
		{"tools null", `{"abi":1,"tools":null}`, []string{"no tools"}},
		{"tools not array", `{"abi":1,"tools":{}}`, []string{"not valid JSON"}},
		{"name empty", manifest("", tool("")), []string{`name ""`, "tools[0]"}},
		{"name missing", manifest("", `{"input_schema":{"type":"object"}}`), []string{`name ""`}},
		{"name 129 chars", manifest("", tool(long)), []string{long}},
		{"name with space", manifest("", tool("a b")), []string{`"a b"`}},
		{"name unicode", manifest("", tool("café")), []string{"does not match"}},
		{"name slash", manifest("", tool("a/b")), []string{`"a/b"`}},
		{"second name bad", manifest("", tool("ok"), tool("bad!")), []string{"tools[1]", `"bad!"`}},
		{"duplicate name", manifest("", tool("dup"), tool("other"), tool("dup")), []string{`"dup"`, "twice"}},
		{"input_schema missing", manifest("", `{"name":"t"}`), []string{`"t"`, "input_schema must be a JSON object"}},
		{"input_schema null", manifest("", `{"name":"t","input_schema":null}`), []string{"input_schema must be a JSON object"}},
		{"input_schema array", manifest("", `{"name":"t","input_schema":[]}`), []string{"input_schema must be a JSON object"}},
		{"input_schema string", manifest("", `{"name":"t","input_schema":"object"}`), []string{"input_schema must be a JSON object"}},
		{"input_schema true", manifest("", `{"name":"t","input_schema":true}`), []string{"input_schema must be a JSON object"}},
		{"input_schema no type", manifest("", `{"name":"t","input_schema":{}}`), []string{`"type": "object"`}},
		{"input_schema type string", manifest("", `{"name":"t","input_schema":{"type":"string"}}`), []string{`"type": "object"`}},
		{"input_schema type array", manifest("", `{"name":"t","input_schema":{"type":["object"]}}`), []string{`"type": "object"`}},
		{"input_schema type null", manifest("", `{"name":"t","input_schema":{"type":null}}`), []string{`"type": "object"`}},
		{"input_schema type Object", manifest("", `{"name":"t","input_schema":{"type":"Object"}}`), []string{`"type": "object"`}},
		{"output_schema array", manifest("", tool("t", `"output_schema":[]`)), []string{`"t"`, "output_schema must be a JSON object"}},
		{"output_schema string", manifest("", tool("t", `"output_schema":"x"`)), []string{"output_schema must be a JSON object"}},
		{"output_schema null", manifest("", tool("t", `"output_schema":null`)), []string{"output_schema must be a JSON object"}},
		{"output_schema number", manifest("", tool("t", `"output_schema":1`)), []string{"output_schema must be a JSON object"}},
		{"output_schema no type", manifest("", tool("t", `"output_schema":{}`)), []string{`"t"`, `output_schema must have "type": "object"`}},
		{"output_schema type array", manifest("", tool("t", `"output_schema":{"type":"array"}`)), []string{`output_schema must have "type": "object"`}},
		{"input property a number", manifest("", `{"name":"t","input_schema":{"type":"object","properties":{"a":5}}}`),
			[]string{`tool "t": input_schema at /properties/a: a subschema must be a JSON object or a boolean, got a number`}},
		{"output items a string", manifest("", tool("t", `"output_schema":{"type":"object","properties":{"a":{"items":"x"}}}`)),
			[]string{`tool "t": output_schema at /properties/a/items: a subschema must be a JSON object or a boolean, got a string`}},
		{"input anyOf an object", manifest("", `{"name":"t","input_schema":{"type":"object","anyOf":{"a":{}}}}`),
			[]string{`input_schema at /anyOf: anyOf must be an array of subschemas, got an object`}},
		{"input duplicate key", manifest("", `{"name":"t","input_schema":{"type":"object","properties":{"a":{},"a":{"type":"string"}}}}`),
			[]string{`input_schema at /properties/a: key "a" appears twice`}},
		{"read_only and destructive", manifest("", tool("t", `"read_only":true,"destructive":true`)), []string{`tool "t": read_only and destructive are both true`}},
		{"module read_only, tool destructive", manifest(`"read_only":true`, tool("t", `"destructive":true`)), []string{"read_only and destructive"}},
		{"destructive not bool", manifest("", tool("t", `"destructive":"no"`)), []string{"not valid JSON"}},
		{"instances unknown", manifest("", tool("t", `"instances":"pooled"`)), []string{`tool "t"`, `instances is "pooled"; want "fresh" or "reuse"`}},
		{"icon without src", manifest("", tool("t", `"icons":[{"mimeType":"image/png"}]`)), []string{`tool "t": icons[0]: src must be an https: URL`}},
		{"icon javascript", manifest("", tool("t", `"icons":[{"src":"javascript:alert(1)"}]`)), []string{"icons[0]", "javascript:alert(1)"}},
		{"icon http", manifest("", tool("t", `"icons":[{"src":"http://example.com/i.png"}]`)), []string{"icons[0]", "https:"}},
		{"icon mime", manifest("", tool("t", `"icons":[{"src":"https://example.com/i.png","mimeType":"text/html"}]`)), []string{`mimeType "text/html"`}},
		{"icon theme", manifest("", tool("t", `"icons":[{"src":"https://example.com/i.png"},{"src":"https://example.com/j.png","theme":"blue"}]`)), []string{"icons[1]", `theme is "blue"`}},
		{"icon empty size", manifest("", tool("t", `"icons":[{"src":"https://example.com/i.png","sizes":[""]}]`)), []string{"sizes holds an empty string"}},
		{"module timeout 0", manifest(`"timeout_ms":0`, tool("t")), []string{"module", "timeout_ms must be > 0", "got 0"}},
		{"module timeout -1", manifest(`"timeout_ms":-1`, tool("t")), []string{"module", "got -1"}},
		{"module timeout float", manifest(`"timeout_ms":1.5`, tool("t")), []string{"not valid JSON"}},
		{"tool timeout 0", manifest("", tool("slow", `"timeout_ms":0`)), []string{"tool slow", "timeout_ms must be > 0"}},
		{"tool timeout -5", manifest(`"timeout_ms":100`, tool("slow", `"timeout_ms":-5`)), []string{"tool slow", "got -5"}},
		{"idempotent not bool", manifest("", tool("t", `"idempotent":"yes"`)), []string{"not valid JSON"}},
		{"invalid UTF-8 in name", manifest("", "{\"name\":\"t\xff\",\"input_schema\":{\"type\":\"object\"}}"), []string{"not valid UTF-8"}},
		{"invalid UTF-8 in description", manifest("", tool("t", "\"description\":\"\xc3\x28\"")), []string{"not valid UTF-8"}},
		{"trailing object", manifest("", tool("t")) + ` {}`, []string{"trailing data"}},
		{"trailing number", manifest("", tool("t")) + "\n1", []string{"trailing data"}},
		{"trailing brace", manifest("", tool("t")) + `}`, []string{"trailing data"}},
		{"trailing bracket", manifest("", tool("t")) + ` ]`, []string{"trailing data"}},
		{"trailing garbage", manifest("", tool("t")) + `xyz`, []string{"trailing data"}},
		{"truncated", manifest("", tool("t"))[:20], []string{"not valid JSON"}},
		{"empty", ``, []string{"not valid JSON"}},
		{"top-level array", `[]`, []string{"not valid JSON"}},
		{"top-level null", `null`, []string{"abi is 0"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := abi.ParseManifest([]byte(tt.doc))
			if m != nil {
				t.Errorf("got manifest %+v with error %v", m, err)
			}
			contractError(t, err, "manifest", tt.want...)
		})
	}
}

// Names at the edges of the rule are accepted.
func TestParseManifestNameEdges(t *testing.T) {
	for _, name := range []string{"a", strings.Repeat("Z", abi.MaxToolNameLen), "a.b-c_d.9"} {
		if _, err := abi.ParseManifest([]byte(manifest("", tool(name)))); err != nil {
			t.Errorf("name %q: %v", name, err)
		}
	}
}

// The optional fields of ABI v1: destructive resolves to MCP's defaults,
// instances to fresh, icons pass through, and the schemas come back in
// normal form (no boolean subschemas).
func TestParseManifestOptionalFields(t *testing.T) {
	doc := manifest(`"read_only":true`,
		tool("reader"),
		tool("append", `"read_only":false,"destructive":false,"instances":"reuse"`),
		tool("delete", `"read_only":false`),
		tool("wipe", `"read_only":false,"destructive":true,"instances":"fresh","icons":[{"src":"https://example.com/wipe.png","mimeType":"image/png","sizes":["48x48"],"theme":"dark"},{"src":"data:image/svg+xml;base64,PHN2Zy8+"}]`),
		`{"name":"json.get","input_schema":{"type":"object","properties":{"doc":true}},"output_schema":{"type":"object","properties":{"value":true},"additionalProperties":false}}`,
	)
	m, err := abi.ParseManifest([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	type flags struct {
		ro, destructive bool
		instances       abi.Instances
		icons           int
	}
	want := map[string]flags{
		"reader":   {true, false, abi.InstancesFresh, 0},
		"append":   {false, false, abi.InstancesReuse, 0},
		"delete":   {false, true, abi.InstancesFresh, 0},
		"wipe":     {false, true, abi.InstancesFresh, 2},
		"json.get": {true, false, abi.InstancesFresh, 0},
	}
	tools := m.Resolve()
	for _, tl := range tools {
		got := flags{tl.ReadOnly, tl.Destructive, tl.Instances, len(tl.Icons)}
		if got != want[tl.Name] {
			t.Errorf("%s: %+v, want %+v", tl.Name, got, want[tl.Name])
		}
	}
	wipe := tools[3].Icons[0]
	if wipe.Src != "https://example.com/wipe.png" || wipe.MIMEType != "image/png" || wipe.Sizes[0] != "48x48" || wipe.Theme != "dark" {
		t.Errorf("icon %+v", wipe)
	}
	get := tools[4]
	if string(get.InputSchema) != `{"type":"object","properties":{"doc":{}}}` ||
		string(get.OutputSchema) != `{"type":"object","properties":{"value":{}},"additionalProperties":false}` {
		t.Errorf("schemas not normalised: %s %s", get.InputSchema, get.OutputSchema)
	}
}
