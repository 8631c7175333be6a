package reliability_test

import (
	"encoding/json"
	"testing"

	"github.com/toolhost/toolhost/dispatcher"
)

// TestHostileCostlySchema: a module whose input schema multiplies the
// validator's work at every level of the arguments (a recursive $ref
// followed by two anyOf branches: 47 bytes of nested arrays cost 59 s of
// CPU). It is refused at load, saying what to factor out.
func TestHostileCostlySchema(t *testing.T) {
	const schema = `{"type":"object","properties":{"a":{"$ref":"#/$defs/n"}},"$defs":{"n":{"anyOf":[
		{"type":"array","items":{"$ref":"#/$defs/n"}},
		{"type":"array","items":{"$ref":"#/$defs/n"},"minItems":2}]}}}`
	hostile(t, rigConfig{}, func(r *rig) {
		m, _ := json.Marshal(map[string]any{"abi": 1, "tools": []any{map[string]any{
			"name": "wat.costly", "input_schema": json.RawMessage(schema)}}})
		wasm := assemble(t, "costly", module{Manifest: m, Response: []byte(`{"result":"ok"}`)})
		wantIn(t, r.mustRefuse("costly.wasm", read(t, wasm)), "anyOf/oneOf/allOf branches that share a $ref")
		r.fails(r.call("wat.costly", `{"a":[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]}`, dispatcher.Options{}), dispatcher.KindNotFound, "wat.costly")
	})
}

// TestHostileDuplicateKeys: a client names a key twice, hoping the schema
// checks one value while the guest reads the other. The call is refused
// as schema before any attempt.
func TestHostileDuplicateKeys(t *testing.T) {
	hostile(t, rigConfig{}, func(r *rig) {
		o := r.call("wat.echo", `{"n":1,"x":{"n":2,"n":3}}`, dispatcher.Options{})
		r.fails(o, dispatcher.KindSchema, `"n" appears more than once`)
		if o.Attempts != 0 {
			t.Fatalf("%d attempts; the guest must not see the arguments", o.Attempts)
		}
	})
}
