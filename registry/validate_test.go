package registry_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/toolhost/toolhost/registry"
)

const validateSchema = `{
  "type": "object",
  "properties": {
    "text":  {"type": "string", "minLength": 1},
    "count": {"type": "integer", "minimum": 0},
    "mode":  {"enum": ["fast", "slow"]},
    "a": {
      "type": "object",
      "properties": {
        "b": {"type": "array", "items": {"type": "integer"}}
      }
    },
    "keys": {
      "type": "object",
      "properties": {
        "x/y": {"type": "string"},
        "m~n": {"type": "string"},
        "~/": {"type": "object", "properties": {"~1": {"type": "boolean"}}}
      }
    },
    "strict": {"type": "object", "properties": {"k": {"type": "string"}}, "additionalProperties": false}
  },
  "required": ["text"],
  "additionalProperties": false
}`

func mustTool(t *testing.T, schema string) *registry.Tool {
	t.Helper()
	reg, err := registry.New([]*registry.Tool{newTool("v.tool", schema)})
	if err != nil {
		t.Fatal(err)
	}
	tl, _ := reg.Lookup("v.tool")
	return tl
}

func TestValidateOK(t *testing.T) {
	tl := mustTool(t, validateSchema)
	for _, args := range []string{
		`{"text":"x"}`,
		` {"text":"x","count":3,"mode":"fast"} `,
		`{"text":"x","a":{"b":[1,2,3]}}`,
		`{"text":"x","keys":{"x/y":"s","m~n":"t","~/":{"~1":true}}}`,
		`{"text":"x","strict":{"k":"v"}}`,
		`{"text":"x","count":1.0}`,
	} {
		if err := tl.Validate([]byte(args)); err != nil {
			t.Errorf("Validate(%s) = %v", args, err)
		}
	}
}

func TestValidateEmptyArgsAreEmptyObject(t *testing.T) {
	open := mustTool(t, `{"type":"object"}`)
	for _, args := range []string{"", " ", "\n\t"} {
		if err := open.Validate([]byte(args)); err != nil {
			t.Errorf("Validate(%q) on an open schema = %v", args, err)
		}
	}
	if err := open.Validate(nil); err != nil {
		t.Errorf("Validate(nil) = %v", err)
	}
	// With a required property, empty args fail as {} would: missing
	// property, not invalid JSON.
	req := mustTool(t, validateSchema)
	for _, args := range [][]byte{nil, []byte(""), []byte("  ")} {
		err := req.Validate(args)
		se := schemaError(t, err)
		if !strings.Contains(se.Reason, "text") || strings.Contains(se.Reason, "JSON") {
			t.Errorf("Validate(%q) = %v, want a missing-property error about text", args, err)
		}
	}
}

func TestValidateErrors(t *testing.T) {
	tl := mustTool(t, validateSchema)
	tests := []struct {
		name   string
		args   string
		path   string   // the JSON Pointer in SchemaError.Path
		reason []string // substrings of the reason
	}{
		{"type mismatch", `{"text":5}`, "/text", []string{"string"}},
		{"type mismatch integer", `{"text":"x","count":"3"}`, "/count", []string{"integer"}},
		{"not an integer", `{"text":"x","count":1.5}`, "/count", []string{"integer"}},
		{"minimum", `{"text":"x","count":-1}`, "/count", []string{"0"}},
		{"minLength", `{"text":""}`, "/text", nil},
		{"enum", `{"text":"x","mode":"medium"}`, "/mode", nil},
		{"missing required", `{}`, "", []string{"text"}},
		{"missing required with others", `{"count":1}`, "", []string{"text"}},
		{"additional property", `{"text":"x","extra":1}`, "", []string{"extra"}},
		{"nested additional property", `{"text":"x","strict":{"k":"v","zz":1}}`, "/strict", []string{"zz"}},
		{"nested path pointer", `{"text":"x","a":{"b":["no"]}}`, "/a/b/0", []string{"integer"}},
		{"nested path second item", `{"text":"x","a":{"b":[1,2,true]}}`, "/a/b/2", []string{"integer"}},
		{"key with slash", `{"text":"x","keys":{"x/y":1}}`, "/keys/x~1y", []string{"string"}},
		{"key with tilde", `{"text":"x","keys":{"m~n":1}}`, "/keys/m~0n", []string{"string"}},
		{"keys with both, nested", `{"text":"x","keys":{"~/":{"~1":"yes"}}}`, "/keys/~0~1/~01", []string{"boolean"}},
		{"arguments not an object", `[1]`, "", []string{"object"}},
		{"arguments null", `null`, "", []string{"object"}},
		{"arguments string", `"text"`, "", []string{"object"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tl.Validate([]byte(tt.args))
			se := schemaError(t, err)
			if se.Tool != "v.tool" {
				t.Errorf("Tool = %q", se.Tool)
			}
			if se.Path != tt.path {
				t.Errorf("Path = %q, want %q (error %v)", se.Path, tt.path, err)
			}
			where := tt.path
			if where == "" {
				where = "/"
			}
			msg := err.Error()
			if !strings.Contains(msg, "at "+where+":") {
				t.Errorf("message %q does not name the path %q", msg, where)
			}
			if !strings.Contains(msg, "v.tool") {
				t.Errorf("message %q does not name the tool", msg)
			}
			for _, r := range tt.reason {
				if !strings.Contains(se.Reason, r) {
					t.Errorf("reason %q does not contain %q", se.Reason, r)
				}
			}
		})
	}
}

func TestValidateInvalidJSON(t *testing.T) {
	tl := mustTool(t, `{"type":"object"}`)
	for _, args := range []string{`{`, `{"a":}`, `{'a':1}`, `nope`, `{"a":1}}`, `{"a":1} {}`, `{"a":1}]`} {
		err := tl.Validate([]byte(args))
		se := schemaError(t, err)
		if se.Path != "" || !strings.Contains(se.Reason, "not valid JSON") {
			t.Errorf("Validate(%q) = %v, want an invalid-JSON error", args, err)
		}
	}
}

func TestSchemaErrorMessage(t *testing.T) {
	tests := []struct {
		err  registry.SchemaError
		want string
	}{
		{registry.SchemaError{Tool: "t", Path: "/a/0", Reason: "bad"}, "arguments for t do not match its input schema: at /a/0: bad"},
		{registry.SchemaError{Tool: "t", Reason: "bad"}, "arguments for t do not match its input schema: at /: bad"},
	}
	for _, tt := range tests {
		if got := tt.err.Error(); got != tt.want {
			t.Errorf("Error() = %q, want %q", got, tt.want)
		}
	}
}

func schemaError(t *testing.T, err error) *registry.SchemaError {
	t.Helper()
	if err == nil {
		t.Fatal("Validate accepted the arguments")
	}
	var se *registry.SchemaError
	if !errors.As(err, &se) {
		t.Fatalf("error %v (%T) is not a *registry.SchemaError", err, err)
	}
	return se
}

// The same arguments always get the same message, even where the
// validator reports in map order (additional properties, several
// dependentRequired failures on one object).
func TestValidateDeterministic(t *testing.T) {
	tests := []struct {
		name, schema, args, want string
	}{
		{"additional properties sorted", validateSchema, `{"text":"x","zz":1,"aa":2,"mm":3,"b":4}`, `'aa', 'b', 'mm', 'zz'`},
		{"nested additional properties sorted", validateSchema, `{"text":"x","strict":{"0":1,"":9,"k":"v","Z":0}}`, `'', '0', 'Z'`},
		{"dependentRequired", `{"type":"object","dependentRequired":{"a":["x"],"b":["y"],"c":["z"]}}`, `{"a":1,"b":2,"c":3}`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tl := mustTool(t, tt.schema)
			first := tl.Validate([]byte(tt.args))
			if first == nil {
				t.Fatal("accepted")
			}
			if !strings.Contains(first.Error(), tt.want) {
				t.Errorf("message %q does not contain %q", first, tt.want)
			}
			for range 50 {
				if err := tl.Validate([]byte(tt.args)); err == nil || err.Error() != first.Error() {
					t.Fatalf("message changed: %q then %q", first, err)
				}
			}
		})
	}
}
