package registry

import (
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/toolhost/toolhost/abi"
)

// Normalising a schema must not change what it accepts: for random schemas
// with booleans in every position that holds a subschema, and random
// documents, the original, the normal form (what clients see) and the
// compact form (what Validate uses) agree on every document.
func TestNormalizeKeepsMeaning(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2)) // fixed seed: the same cases every run
	schemas, docs := 200, 60
	if testing.Short() {
		schemas = 50
	}
	instances := make([]any, docs)
	for i := range instances {
		instances[i] = randDoc(r, 3)
	}
	for i := 0; i < schemas; i++ {
		orig, _ := json.Marshal(randRoot(r))
		norm, err := abi.NormalizeSchema(orig)
		if err != nil {
			t.Fatalf("NormalizeSchema(%s): %v", orig, err)
		}
		if p, ok := abi.FirstBooleanPropertySchema(norm); ok {
			t.Fatalf("normal form of %s has a boolean at %s: %s", orig, p, norm)
		}
		compact, err := abi.CompactSchema(norm)
		if err != nil {
			t.Fatalf("CompactSchema(%s): %v", norm, err)
		}
		forms := []*jsonschema.Schema{mustCompile(t, orig), mustCompile(t, norm), mustCompile(t, compact)}
		for _, doc := range instances {
			want := forms[0].Validate(doc) == nil
			for j, f := range forms[1:] {
				if got := f.Validate(doc) == nil; got != want {
					d, _ := json.Marshal(doc)
					t.Fatalf("document %s: original %s accepts=%v, %s form %s accepts=%v",
						d, orig, want, []string{"normal", "compact"}[j], [][]byte{norm, compact}[j], got)
				}
			}
		}
	}
}

func mustCompile(t *testing.T, schema []byte) *jsonschema.Schema {
	t.Helper()
	sch, err := compileSchema("prop", "input", schema)
	if err != nil {
		t.Fatalf("%s: %v", schema, err)
	}
	return sch
}

var propNames = []string{"a", "b", "c"}

// randRoot builds a tool schema: an object, with $defs at the root for the
// $refs inside to point at.
func randRoot(r *rand.Rand) map[string]any {
	root := map[string]any{}
	for len(root) == 0 {
		if s, ok := randSchema(r, 3, true).(map[string]any); ok {
			root = s
		}
	}
	root["$defs"] = map[string]any{"x": randSchema(r, 2, false)}
	return root
}

// randSchema builds a schema of depth at most d using every keyword that
// holds subschemas, with true and false among the subschemas; refs allows
// {"$ref": "#/$defs/x"}.
func randSchema(r *rand.Rand, d int, refs bool) any {
	if d == 0 || r.IntN(4) == 0 {
		switch r.IntN(5) {
		case 0:
			return true
		case 1:
			return false
		case 2:
			return map[string]any{"type": []string{"object", "array", "string", "number", "null", "boolean"}[r.IntN(6)]}
		case 3:
			return map[string]any{"const": randDoc(r, 1)}
		}
		return map[string]any{}
	}
	sub := func() any { return randSchema(r, d-1, refs) }
	subs := func() []any {
		out := make([]any, 1+r.IntN(3))
		for i := range out {
			out[i] = sub()
		}
		return out
	}
	props := func() map[string]any {
		out := map[string]any{}
		for _, p := range propNames {
			if r.IntN(2) == 0 {
				out[p] = sub()
			}
		}
		return out
	}
	s := map[string]any{}
	for range 1 + r.IntN(3) {
		switch r.IntN(17) {
		case 0:
			s["properties"] = props()
		case 1:
			s["additionalProperties"] = sub()
		case 2:
			s["patternProperties"] = map[string]any{"^[ab]": sub()}
		case 3:
			s["items"] = sub()
		case 4:
			s["prefixItems"] = subs()
		case 5:
			s["contains"] = sub()
		case 6:
			s["allOf"] = subs()
		case 7:
			s["anyOf"] = subs()
		case 8:
			s["oneOf"] = subs()
		case 9:
			s["not"] = sub()
		case 10:
			s["if"], s["then"], s["else"] = sub(), sub(), sub()
		case 11:
			s["dependentSchemas"] = props()
		case 12:
			s["propertyNames"] = sub()
		case 13:
			s["unevaluatedProperties"] = sub()
		case 14:
			s["unevaluatedItems"] = sub()
		case 15:
			if refs {
				s["$ref"] = "#/$defs/x"
			} else {
				s["definitions"] = map[string]any{"y": sub()}
			}
		case 16:
			s["enum"] = []any{true, false, map[string]any{}, randDoc(r, 1)} // data, never rewritten
		}
	}
	return s
}

// randDoc builds a JSON document of depth at most d.
func randDoc(r *rand.Rand, d int) any {
	switch k := r.IntN(7); {
	case d == 0 || k < 4:
		return []any{nil, true, false, 0.0, 1.5, "a", "b"}[r.IntN(7)]
	case k < 6:
		o := map[string]any{}
		for _, p := range propNames {
			if r.IntN(2) == 0 {
				o[p] = randDoc(r, d-1)
			}
		}
		return o
	default:
		a := make([]any, r.IntN(4))
		for i := range a {
			a[i] = randDoc(r, d-1)
		}
		return a
	}
}

// The property test's generator must reach booleans in nested positions,
// or it proves little.
func TestRandSchemaCoverage(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	nested := 0
	for range 400 {
		b, _ := json.Marshal(randRoot(r))
		if p, ok := abi.FirstBooleanPropertySchema(b); ok && strings.Count(p, "/") >= 2 {
			nested++
		}
	}
	if nested < 50 {
		t.Errorf("only %d of 400 schemas have a nested boolean subschema", nested)
	}
}
