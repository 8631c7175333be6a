// Package tooltest is the shared harness for the native tests of the tool
// modules under tools-src/. It runs tools through guest.Dispatch and
// guest.Manifest exactly as toolhost_call and toolhost_describe would, and
// checks arguments and results against the schemas the module publishes,
// because natively nothing else enforces them: the SDK trusts the host to
// validate arguments. It is internal to the examples' module: the Makefile
// builds every other folder of tools-src as a tool module.
//
// Like the SDK, it is not safe for concurrent use (tests call it from one
// goroutine per test).
package tooltest

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/toolhost/toolhost/abi/guest"
	"github.com/toolhost/toolhost/abi/guest/abi"
)

// Case is one call of a table-driven test. Exactly one outcome is checked:
// Rejected, an error Kind, a Check function or a Want document.
type Case struct {
	Name string
	Tool string
	Args string // JSON arguments, as the host would pass them
	// Rejected says the input schema must refuse Args, so the host never
	// reaches the guest. When Kind is also set, the guest's own defensive
	// check is run and must answer with that kind.
	Rejected bool
	// Kind and Msg expect an error of that kind whose message contains Msg.
	Kind abi.ErrorKind
	Msg  string
	// Want is the expected result, compared as JSON values.
	Want string
	// Check inspects a result that has no fixed value (random output).
	Check func(t *testing.T, result []byte)
}

// Run runs each case as a subtest. Every argument document that is not
// marked Rejected must satisfy the tool's input schema, and every result its
// output schema: a test input the host would refuse proves nothing, and a
// result that breaks the published schema is a bug even when its value is
// right.
func Run(t *testing.T, cases []Case) {
	t.Helper()
	tools := Tools(t)
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			spec, ok := tools[c.Tool]
			if !ok {
				t.Fatalf("manifest has no tool %q", c.Tool)
			}
			argErr := validate(t, spec.InputSchema, c.Args)
			if c.Rejected {
				if argErr == nil {
					t.Fatalf("input schema accepted %s, want it refused", c.Args)
				}
				if c.Kind == "" {
					return
				}
			} else if argErr != nil {
				t.Fatalf("input schema refused %s: %v", c.Args, argErr)
			}

			resp, err := abi.ParseResponse(guest.Dispatch(c.Tool, []byte(c.Args)))
			if err != nil {
				t.Fatalf("response breaks the ABI: %v", err)
			}
			if c.Kind != "" {
				if resp.Error == nil {
					t.Fatalf("got result %s, want %s error containing %q", resp.Result, c.Kind, c.Msg)
				}
				if resp.Error.Kind != c.Kind || !strings.Contains(resp.Error.Message, c.Msg) {
					t.Fatalf("got %s error %q, want %s error containing %q",
						resp.Error.Kind, resp.Error.Message, c.Kind, c.Msg)
				}
				return
			}
			if resp.Error != nil {
				t.Fatalf("got %s error %q, want a result", resp.Error.Kind, resp.Error.Message)
			}
			if len(spec.OutputSchema) > 0 {
				if err := validate(t, spec.OutputSchema, string(resp.Result)); err != nil {
					t.Fatalf("result %s breaks the output schema: %v", resp.Result, err)
				}
			}
			if c.Check != nil {
				c.Check(t, resp.Result)
				return
			}
			if !SameJSON(t, resp.Result, c.Want) {
				t.Fatalf("got  %s\nwant %s", resp.Result, c.Want)
			}
		})
	}
}

// Flags are the resolved manifest flags of one tool.
type Flags struct {
	Idempotent, ReadOnly bool
	TimeoutMS            int
}

// CheckManifest checks that the module's manifest passes abi.ParseManifest,
// declares exactly the tools in want with those flags, gives each a title
// and a description, and has schemas that compile and that the SDK already
// wrote in normal form (no boolean subschemas).
func CheckManifest(t *testing.T, want map[string]Flags) {
	t.Helper()
	m, err := abi.ParseManifest(guest.Manifest())
	if err != nil {
		t.Fatalf("ParseManifest: %v", err)
	}
	var raw struct {
		Tools []struct {
			Name         string          `json:"name"`
			InputSchema  json.RawMessage `json:"input_schema"`
			OutputSchema json.RawMessage `json:"output_schema"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(guest.Manifest(), &raw); err != nil {
		t.Fatal(err)
	}
	for _, tool := range raw.Tools {
		if len(tool.InputSchema) == 0 {
			t.Errorf("%s: no input schema in the manifest", tool.Name)
		}
		for _, s := range []json.RawMessage{tool.InputSchema, tool.OutputSchema} {
			if p, found := abi.FirstBooleanPropertySchema(s); found {
				t.Errorf("%s: the SDK wrote a boolean subschema at %s: %s", tool.Name, p, s)
			}
		}
	}
	got := map[string]bool{}
	for _, tool := range m.Resolve() {
		got[tool.Name] = true
		w, ok := want[tool.Name]
		if !ok {
			t.Errorf("unexpected tool %q", tool.Name)
			continue
		}
		if g := (Flags{tool.Idempotent, tool.ReadOnly, tool.TimeoutMS}); g != w {
			t.Errorf("%s: flags %+v, want %+v", tool.Name, g, w)
		}
		if tool.Title == "" || len(tool.Description) < 40 {
			t.Errorf("%s: needs a title and a description a model can act on", tool.Name)
		}
		compile(t, tool.InputSchema)
		if len(tool.OutputSchema) > 0 {
			compile(t, tool.OutputSchema)
		}
	}
	for name := range want {
		if !got[name] {
			t.Errorf("manifest lacks tool %q", name)
		}
	}
}

// Tools returns the module's tools by name, from its manifest.
func Tools(t *testing.T) map[string]abi.Tool {
	t.Helper()
	m, err := abi.ParseManifest(guest.Manifest())
	if err != nil {
		t.Fatalf("ParseManifest: %v", err)
	}
	tools := map[string]abi.Tool{}
	for _, tool := range m.Resolve() {
		tools[tool.Name] = tool
	}
	return tools
}

// SameJSON reports whether got and want encode the same JSON value.
func SameJSON(t *testing.T, got json.RawMessage, want string) bool {
	t.Helper()
	var g, w any
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatalf("result is not JSON: %v", err)
	}
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatalf("bad Want %s: %v", want, err)
	}
	return reflect.DeepEqual(g, w)
}

func compile(t *testing.T, schema json.RawMessage) *jsonschema.Schema {
	t.Helper()
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(schema))
	if err != nil {
		t.Fatalf("schema is not JSON: %v", err)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	if err := c.AddResource("mem://schema.json", doc); err != nil {
		t.Fatalf("schema: %v", err)
	}
	s, err := c.Compile("mem://schema.json")
	if err != nil {
		t.Fatalf("schema does not compile: %v\n%s", err, schema)
	}
	return s
}

func validate(t *testing.T, schema json.RawMessage, doc string) error {
	t.Helper()
	v, err := jsonschema.UnmarshalJSON(strings.NewReader(doc))
	if err != nil {
		t.Fatalf("test document is not JSON: %v\n%s", err, doc)
	}
	return compile(t, schema).Validate(v)
}
