package abi_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/toolhost/toolhost/abi"
)

// Every keyword that holds subschemas is walked; a boolean property schema
// takes its object form, every other boolean subschema stays as written
// (OpenAI's strict mode wants the literal "additionalProperties": false),
// and the values of data keywords stay as written.
func TestNormalizeSchema(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"property any", `{"type":"object","properties":{"value":true}}`, `{"type":"object","properties":{"value":{}}}`},
		{"property forbidden", `{"type":"object","properties":{"value":false}}`, `{"type":"object","properties":{"value":{"not":{}}}}`},
		{"additionalProperties false stays", `{"type":"object","properties":{"a":true},"additionalProperties":false}`, `{"type":"object","properties":{"a":{}},"additionalProperties":false}`},
		{"patternProperties stay", `{"properties":{"a":true},"patternProperties":{"^x":true,"^y":false}}`, `{"properties":{"a":{}},"patternProperties":{"^x":true,"^y":false}}`},
		{"items and prefixItems stay", `{"properties":{"a":true},"prefixItems":[true,{"type":"string"},false],"items":false}`, `{"properties":{"a":{}},"prefixItems":[true,{"type":"string"},false],"items":false}`},
		{"combinators walked", `{"allOf":[{"properties":{"a":true}}],"anyOf":[false,true]}`, `{"allOf":[{"properties":{"a":{}}}],"anyOf":[false,true]}`},
		{"$defs walked", `{"$defs":{"a":true,"b":{"properties":{"c":false}}}}`, `{"$defs":{"a":true,"b":{"properties":{"c":{"not":{}}}}}}`},
		{"deep", `{"properties":{"a":{"items":{"properties":{"b":true,"c":{"anyOf":[true]}}}}}}`, `{"properties":{"a":{"items":{"properties":{"b":{},"c":{"anyOf":[true]}}}}}}`},
		{"a property named like a keyword", `{"properties":{"not":true,"enum":false,"properties":true}}`,
			`{"properties":{"not":{},"enum":{"not":{}},"properties":{}}}`},
		{"data keywords untouched", `{"properties":{"a":true},"const":true,"enum":[true,false],"default":{"properties":{"x":true}},"examples":[false],"x-custom":{"properties":{"y":true}},"additionalProperties":true}`,
			`{"properties":{"a":{}},"const":true,"enum":[true,false],"default":{"properties":{"x":true}},"examples":[false],"x-custom":{"properties":{"y":true}},"additionalProperties":true}`},
		{"numbers as written", `{"maximum":9007199254740993,"multipleOf":1e-300,"properties":{"a":true}}`, `{"maximum":9007199254740993,"multipleOf":1e-300,"properties":{"a":{}}}`},
		{"an older normal form's false", `{"properties":{"a":{"not":{}}},"additionalProperties":{ "not" : {} },"items":{"not":{},"x":1}}`, `{"properties":{"a":{"not":{}}},"additionalProperties":false,"items":{"not":{},"x":1}}`},
		{"key order kept", `{"z":1,"properties":{"b":true,"a":{}},"a":2}`, `{"z":1,"properties":{"b":{},"a":{}},"a":2}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := abi.NormalizeSchema([]byte(tt.in))
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want {
				t.Errorf("NormalizeSchema(%s)\n= %s\nwant %s", tt.in, got, tt.want)
			}
			again, err := abi.NormalizeSchema(got)
			if err != nil || string(again) != string(got) {
				t.Errorf("not idempotent: %s (%v)", again, err)
			}
			if p, ok := abi.FirstBooleanPropertySchema(got); ok {
				t.Errorf("normal form still has a boolean subschema at %q", p)
			}
		})
	}
}

// A schema with nothing to change comes back as it came, white space and
// all: the common case costs no rewrite.
func TestNormalizeSchemaUnchanged(t *testing.T) {
	in := []byte("{ \"type\" : \"object\",\n \"properties\": {\"a\": {\"type\": \"string\", \"enum\": [true]}} }")
	got, err := abi.NormalizeSchema(in)
	if err != nil {
		t.Fatal(err)
	}
	if &got[0] != &in[0] || len(got) != len(in) {
		t.Errorf("rewrote an already normal schema: %s", got)
	}
	if p, ok := abi.FirstBooleanPropertySchema([]byte(`{"properties":{"a":{"items":false},"b":{"properties":{"c":true}}}}`)); !ok || p != "/properties/b/properties/c" {
		t.Errorf("FirstBooleanPropertySchema = %q, %v", p, ok)
	}
}

// What cannot be served is refused with the JSON Pointer of the place.
func TestNormalizeSchemaRefuses(t *testing.T) {
	deep := strings.Repeat(`{"not":`, abi.MaxSchemaDepth+1) + "{}" + strings.Repeat("}", abi.MaxSchemaDepth+1)
	tests := []struct{ name, in, ptr, reason string }{
		{"not an object", `true`, "", "a schema must be a JSON object, got a boolean"},
		{"array", `[]`, "", "a schema must be a JSON object, got an array"},
		{"not JSON", `{"a":`, "/a", "not valid JSON"},
		{"trailing data", `{} {}`, "", "trailing data"},
		{"property a number", `{"properties":{"a":5}}`, "/properties/a", "got a number"},
		{"property a huge number", `{"properties":{"a":1e400}}`, "/properties/a", "got a number"},
		{"property null", `{"properties":{"a/b~c":null}}`, "/properties/a~1b~0c", "got null"},
		{"items a string", `{"items":"string"}`, "/items", "got a string"},
		{"not an array", `{"not":[]}`, "/not", "got an array"},
		{"allOf an object", `{"allOf":{}}`, "/allOf", "allOf must be an array of subschemas, got an object"},
		{"anyOf element", `{"anyOf":[{},1]}`, "/anyOf/1", "got a number"},
		{"properties an array", `{"properties":[]}`, "/properties", "properties must be an object of subschemas, got an array"},
		{"$defs entry", `{"$defs":{"x":"y"}}`, "/$defs/x", "got a string"},
		{"duplicate key", `{"type":"object","type":"string"}`, "/type", `key "type" appears twice`},
		{"duplicate property", `{"properties":{"a":{},"a":true}}`, "/properties/a", `key "a" appears twice`},
		{"too deep", deep, "/not" + strings.Repeat("/not", abi.MaxSchemaDepth-1), "deeper than"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := abi.NormalizeSchema([]byte(tt.in))
			var se *abi.SchemaError
			if !errors.As(err, &se) {
				t.Fatalf("error %v, want a *SchemaError", err)
			}
			if se.Pointer != tt.ptr || !strings.Contains(se.Reason, tt.reason) {
				t.Errorf("error at %q: %q; want at %q: …%s…", se.Pointer, se.Reason, tt.ptr, tt.reason)
			}
		})
	}
}

// CompactSchema undoes NormalizeSchema, for validators' messages.
func TestCompactSchema(t *testing.T) {
	in := `{"type":"object","properties":{"a":true,"b":{ "not" : { } },"c":{"type":"string"}},"additionalProperties":false,"const":{}}`
	norm, err := abi.NormalizeSchema([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	got, err := abi.CompactSchema(norm)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"type":"object","properties":{"a":true,"b":false,"c":{"type":"string"}},"additionalProperties":false,"const":{}}`
	if string(got) != want {
		t.Errorf("CompactSchema(%s)\n= %s\nwant %s", norm, got, want)
	}
	if same, _ := abi.CompactSchema([]byte(`{"type":"object"}`)); string(same) != `{"type":"object"}` {
		t.Errorf("the root became %s", same)
	}
}

// Whatever the bytes, NormalizeSchema never panics, and what it returns is
// JSON in normal form that it returns unchanged, and that CompactSchema
// takes back.
func FuzzNormalizeSchema(f *testing.F) {
	for _, s := range []string{
		`{"type":"object","properties":{"value":true},"additionalProperties":false}`,
		`{"items":[true,{"not":false}],"dependencies":{"a":["b"],"c":false}}`,
		`{"allOf":[{"if":true,"then":false}],"$defs":{"x":{"enum":[true]}}}`,
		`{"properties":{"a":5}}`, `{"a":1,"a":2}`, `true`, `{`, `{"not":{"not":{"not":true}}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		out, err := abi.NormalizeSchema(in)
		if err != nil {
			var se *abi.SchemaError
			if !errors.As(err, &se) {
				t.Fatalf("error %T %v is not a *SchemaError", err, err)
			}
			return
		}
		if !json.Valid(out) {
			t.Fatalf("NormalizeSchema(%q) = %q: not JSON", in, out)
		}
		if p, found := abi.FirstBooleanPropertySchema(out); found {
			t.Fatalf("NormalizeSchema(%q) = %q: boolean at %s", in, out, p)
		}
		again, err := abi.NormalizeSchema(out)
		if err != nil || !bytes.Equal(again, out) {
			t.Fatalf("not idempotent on %q: %q, %v", out, again, err)
		}
		if c, err := abi.CompactSchema(out); err != nil || !json.Valid(c) {
			t.Fatalf("CompactSchema(%q) = %q, %v", out, c, err)
		}
	})
}

// BenchmarkNormalizeSchema: a 1 MiB schema (about 9,000 properties), the
// most a manifest holds under the default output cap, with booleans to
// rewrite.
func BenchmarkNormalizeSchema(b *testing.B) {
	var sb strings.Builder
	sb.WriteString(`{"type":"object","additionalProperties":false,"properties":{`)
	for i := 0; sb.Len() < 1<<20; i++ {
		if i > 0 {
			sb.WriteByte(',')
		}
		fmt.Fprintf(&sb, `"p%d":{"type":"array","items":true,"description":"property number %d of a very wide object, described at length"},"any%d":true`, i, i, i)
	}
	sb.WriteString(`}}`)
	schema := []byte(sb.String())
	b.SetBytes(int64(len(schema)))
	for b.Loop() {
		if _, err := abi.NormalizeSchema(schema); err != nil {
			b.Fatal(err)
		}
	}
}
