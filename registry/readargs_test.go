package registry

import (
	"bytes"
	"reflect"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// FuzzDecodeArgs holds the one-pass reading to the two passes it
// replaces: whenever it answers, the value is jsonschema.UnmarshalJSON's
// and the value counts and cost are scanArgs'; when it declines, the two passes
// find a problem (not JSON, or a key named twice). Run as a test, it
// checks the seeds.
func FuzzDecodeArgs(f *testing.F) {
	for _, s := range []string{
		`{}`, `[]`, `{"a":1}`, `{"a":{"b":[1,2,{"c":"d"}]},"e":null,"f":true}`, `[[],{},[{}]]`,
		`"x"`, `12345678901234567890.5e3`, ` { "a" : [ ] } `, `{"a":1,"a":2}`, `{"a":{"b":1,"b":2}}`,
		`{} {}`, `{}x`, `{"a":}`, `{"a" 1}`, `[1,]`, `{"a":1,}`, `{`, `}`, `[1 2]`, `{"":""}`,
		`{"a":"\u00e9\ud83d\ude00"}`, `{"a:b":"c:\"d:","e":{"f\\":1}}`, `{"a":{"x":1},"b":{"x":1,"x":1}}`, strings.Repeat("[", 10001) + strings.Repeat("]", 10001),
		strings.Repeat("[", 20) + strings.Repeat("]", 20),
	} {
		f.Add([]byte(s))
	}
	tl := &Tool{Name: "t", cost: costProfile{levels: []int{1, 7, 3}, tail: 500}}
	f.Fuzz(func(t *testing.T, args []byte) {
		inst, work, values, ok := tl.decodeArgs(args)
		want, werr := jsonschema.UnmarshalJSON(bytes.NewReader(args))
		if !ok {
			if werr == nil && !scanArgs(args).dup {
				t.Fatalf("decodeArgs declined %q, which the two passes accept", args)
			}
			return
		}
		if werr != nil {
			t.Fatalf("decodeArgs accepted %q: %v", args, werr)
		}
		if !reflect.DeepEqual(inst, want) {
			t.Fatalf("decodeArgs(%q) = %#v, want %#v", args, inst, want)
		}
		s := scanArgs(args)
		if s.dup || s.values != values {
			t.Fatalf("decodeArgs(%q): %d values; scanArgs: %d values, dup %v", args, values, s.values, s.dup)
		}
		// work stops counting past the limit; below it the sums agree.
		if want := tl.cost.work(s.perDepth); min(work, MaxValidationWork+1) != min(want, MaxValidationWork+1) {
			t.Fatalf("decodeArgs(%q): work %d, want %d", args, work, want)
		}
	})
}

// TestEmptyArgsVerdict: the verdict on {} taken at load is the one
// validating them would give, for arguments {} however they are spelled,
// and each caller gets its own copy of the error.
func TestEmptyArgsVerdict(t *testing.T) {
	for _, schema := range []string{`{"type":"object"}`, `{"type":"object","required":["text"]}`,
		`{"type":"object","minProperties":1}`} {
		tl := &Tool{Name: "t", InputSchema: []byte(schema), Handler: HandlerFunc(nil)}
		if err := tl.prepare(); err != nil {
			t.Fatal(err)
		}
		if !tl.emptyChecked {
			t.Fatalf("%s: no verdict on {} taken", schema)
		}
		want := tl.validate([]byte("{}"))
		for _, args := range []string{"", " ", "{}", " {}\n"} {
			got := tl.Validate([]byte(args))
			if (got == nil) != (want == nil) || (got != nil && got.Error() != want.Error()) {
				t.Fatalf("%s: Validate(%q) = %v, want %v", schema, args, got, want)
			}
			if got != nil {
				got.(*SchemaError).Reason = "changed"
				if again := tl.Validate([]byte(args)); again.Error() != want.Error() {
					t.Fatalf("%s: a caller's change to the error reached the next: %v", schema, again)
				}
			}
		}
	}
}
