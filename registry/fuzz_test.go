package registry_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/toolhost/toolhost/registry"
)

// FuzzValidate drives arbitrary arguments through schema validation: it
// never panics, every failure is a *registry.SchemaError with a JSON
// Pointer path, the answer is the same twice, and only a JSON object
// passes. The seed corpus is in testdata/fuzz/FuzzValidate/.
func FuzzValidate(f *testing.F) {
	reg, err := registry.New([]*registry.Tool{newTool("fuzz.tool", validateSchema)})
	if err != nil {
		f.Fatal(err)
	}
	tl, _ := reg.Lookup("fuzz.tool")
	f.Fuzz(func(t *testing.T, args []byte) {
		err := tl.Validate(args)
		if err == nil {
			doc := args
			if len(bytes.TrimSpace(doc)) == 0 {
				doc = []byte("{}")
			}
			var obj map[string]json.RawMessage
			if json.Unmarshal(doc, &obj) != nil || obj == nil {
				t.Fatalf("accepted %q, which is not a JSON object", args)
			}
			if _, ok := obj["text"]; !ok {
				t.Fatalf("accepted %q without the required property", args)
			}
			return
		}
		se, ok := err.(*registry.SchemaError)
		if !ok {
			t.Fatalf("error %v is %T, not *registry.SchemaError", err, err)
		}
		if se.Tool != "fuzz.tool" || se.Reason == "" {
			t.Fatalf("incomplete error %+v", se)
		}
		if se.Path != "" && !strings.HasPrefix(se.Path, "/") {
			t.Fatalf("path %q is not a JSON Pointer", se.Path)
		}
		if err2 := tl.Validate(args); err2 == nil || err2.Error() != err.Error() {
			t.Fatalf("Validate(%q) is not deterministic: %v then %v", args, err, err2)
		}
	})
}
