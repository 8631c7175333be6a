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
	}, {
		Name:        "text.upper",
		InputSchema: m.Tools[1].InputSchema,
		TimeoutMS:   abi.DefaultTimeoutMS,
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
