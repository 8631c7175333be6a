package registry_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/toolhost/toolhost/registry"
)

// Arguments that name a key twice are refused: the validator checks the
// last value, a guest's parser may read the first, so a value the schema
// never saw would reach the tool.
func TestDuplicateKeysRefused(t *testing.T) {
	tool := mustTool(t, `{"type":"object","properties":{"n":{"type":"integer","maximum":10}}}`)
	for _, tc := range []struct {
		args, path, key string
	}{
		{`{"n":1000000,"n":1}`, "", "n"},
		{`{"x":{"b":1,"b":2}}`, "/x", "b"},
		{`{"l":[{"k":1},{"k":1,"k":2}]}`, "/l/1", "k"},
		{`{"a":1,"\u0061":2}`, "", "a"},
		{`{"a/b":{"~":[1,{"z":0,"y":[],"z":1}]}}`, "/a~1b/~0/1", "z"},
	} {
		err := tool.Validate([]byte(tc.args))
		var se *registry.SchemaError
		if !errors.As(err, &se) || se.Path != tc.path || !strings.Contains(se.Reason, fmt.Sprintf("%q appears more than once", tc.key)) {
			t.Errorf("%s: got %v, want a duplicate %q at %q", tc.args, err, tc.key, tc.path)
		}
	}
	for _, ok := range []string{`{"a":{"a":1},"b":[{"a":1},{"a":2}],"n":3}`, `{"s":"{\"a\":1,\"a\":2}"}`, `{}`, ``} {
		if err := tool.Validate([]byte(ok)); err != nil {
			t.Errorf("%s: %v", ok, err)
		}
	}
}

// An input schema whose validation cost multiplies with every level of
// the arguments is refused at load; recursive schemas that apply one
// subschema per level, and schemas with many alternatives, load.
func TestCostlySchemaRefusedAtLoad(t *testing.T) {
	chain := func(n int) string { // a_i = anyOf[a_{i+1}, a_{i+1}]: 2^n on one value
		var defs []string
		for i := range n {
			defs = append(defs, fmt.Sprintf(`"a%d":{"anyOf":[{"$ref":"#/$defs/a%d"},{"$ref":"#/$defs/a%d"}]}`, i, i+1, i+1))
		}
		defs = append(defs, fmt.Sprintf(`"a%d":{"type":"integer"}`, n))
		return `{"type":"object","properties":{"x":{"$ref":"#/$defs/a0"}},"$defs":{` + strings.Join(defs, ",") + `}}`
	}
	// Each level of nested arrays is tried against both branches: 52
	// bytes of arguments cost minutes.
	const recursive = `{"type":"object","properties":{"a":{"$ref":"#/$defs/n"}},"$defs":{"n":{"anyOf":[
		{"type":"array","items":{"$ref":"#/$defs/n"}},
		{"type":"array","items":{"$ref":"#/$defs/n"},"minItems":2}]}}}`
	for name, schema := range map[string]string{"shared refs": chain(12), "recursive": recursive,
		"dynamic": `{"$dynamicAnchor":"n","type":"object","additionalProperties":{"anyOf":[{"$dynamicRef":"#n"},{"$dynamicRef":"#n"}]}}`} {
		_, err := registry.New([]*registry.Tool{newTool("costly", schema)})
		if err == nil || !strings.Contains(err.Error(), `tool "costly": input schema`) {
			t.Errorf("%s: got %v, want refused", name, err)
		}
	}
	var many []string
	for i := range 300 {
		many = append(many, fmt.Sprintf(`{"type":"object","properties":{"k%d":{"type":"string"}},"required":["k%d"]}`, i, i))
	}
	for name, schema := range map[string]string{
		"tree":          `{"type":"object","properties":{"kids":{"type":"array","items":{"$ref":"#"}}}}`,
		"list":          `{"$defs":{"l":{"type":"object","properties":{"v":{},"next":{"$ref":"#/$defs/l"}}}},"type":"object","properties":{"head":{"$ref":"#/$defs/l"}}}`,
		"cycle":         `{"type":"object","additionalProperties":{"$ref":"#/$defs/b"},"$defs":{"b":{"type":"array","items":{"$ref":"#"}}}}`,
		"self in anyOf": `{"type":"object","anyOf":[{"$ref":"#"},{"required":["a"]}]}`,
		"many choices":  `{"type":"object","properties":{"x":{"oneOf":[` + strings.Join(many, ",") + `]}}}`,
		"shallow chain": chain(6),
	} {
		if _, err := registry.New([]*registry.Tool{newTool("fine", schema)}); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// slowSchema is within the load-time bound but costly: every item of l
// is tried against 2^7 branches that all fail (about 1.2 ms per item).
var slowSchema = func() string {
	var defs []string
	for i := range 6 {
		defs = append(defs, fmt.Sprintf(`"a%d":{"anyOf":[{"$ref":"#/$defs/a%d"},{"$ref":"#/$defs/a%d"}]}`, i, i+1, i+1))
	}
	defs = append(defs, `"a6":{"type":"string"}`)
	return `{"type":"object","properties":{"l":{"type":"array","items":{"$ref":"#/$defs/a0"}}},"$defs":{` + strings.Join(defs, ",") + `}}`
}()

// Validation gets no more time than the tool: arguments whose check
// outlasts the tool's timeout are refused at it, not checked for as long
// as they take (1,000 items here: about a second of CPU, against a 1 ms
// tool). Arguments whose estimated cost is over MaxValidationWork (20,000
// items took 25 s to validate) are refused before validation starts.
func TestValidateWithinTheToolsTimeout(t *testing.T) {
	tool := newTool("u", slowSchema)
	tool.Timeout = time.Millisecond
	if _, err := registry.New([]*registry.Tool{tool}); err != nil {
		t.Fatal(err)
	}
	items := func(n int) []byte { return []byte(`{"l":[` + strings.Repeat(`1,`, n-1) + `1]}`) }
	err := tool.ValidateContext(context.Background(), items(1000))
	var de *registry.DeadlineError
	if !errors.As(err, &de) || de.Budget != tool.Timeout || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("got %v, want a DeadlineError at the tool's 1ms", err)
	}
	var se *registry.SchemaError
	if err := tool.ValidateContext(context.Background(), items(20000)); !errors.As(err, &se) || !strings.Contains(se.Reason, "20002 values") {
		t.Fatalf("got %v, want refused before validation", err)
	}
	if err := tool.ValidateContext(context.Background(), []byte(`{"l":["a","b"]}`)); err != nil {
		t.Fatal(err)
	}
}
