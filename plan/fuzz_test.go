package plan

import (
	"encoding/json"
	"errors"
	"reflect"
	"testing"
)

// FuzzParseFile: the parser never panics, every error is an invalid_plan
// *Error, and an accepted file re-encodes to one that parses to the same
// value and that satisfies the executor's rules. Seeds live in
// testdata/fuzz/FuzzParseFile.
func FuzzParseFile(f *testing.F) {
	f.Add([]byte(`{"goal":"g","steps":[{"id":1,"tool_name":"t","args":{"a":{"$ref":"/steps/1/result"}}}]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		pf, err := ParseFile(b)
		if err != nil {
			var pe *Error
			if !errors.As(err, &pe) || pe.Kind != KindInvalidPlan {
				t.Fatalf("error %v (%T) is not an invalid_plan *Error", err, err)
			}
			return
		}
		again, err := json.Marshal(pf)
		if err != nil {
			t.Fatalf("re-encoding an accepted file: %v", err)
		}
		pf2, err := ParseFile(again)
		if err != nil {
			t.Fatalf("re-encoded file %s is refused: %v", again, err)
		}
		if !reflect.DeepEqual(pf, pf2) {
			t.Fatalf("round trip changed the file:\n%+v\n%+v", pf, pf2)
		}
		for i, s := range pf.Steps {
			if i > 0 && s.ID <= pf.Steps[i-1].ID {
				t.Fatalf("accepted ids out of order: %d after %d", s.ID, pf.Steps[i-1].ID)
			}
			for _, d := range dependencies(s) {
				if d >= s.ID {
					t.Fatalf("step %d accepted with a dependency on %d", s.ID, d)
				}
			}
		}
		pf.Limits().resolve()
	})
}
