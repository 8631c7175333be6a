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
// and the value counts are scanArgs'; when it declines, the two passes
// find a problem (not JSON, or a key named twice). Run as a test, it
// checks the seeds.
func FuzzDecodeArgs(f *testing.F) {
	for _, s := range []string{
		`{}`, `[]`, `{"a":1}`, `{"a":{"b":[1,2,{"c":"d"}]},"e":null,"f":true}`, `[[],{},[{}]]`,
		`"x"`, `12345678901234567890.5e3`, ` { "a" : [ ] } `, `{"a":1,"a":2}`, `{"a":{"b":1,"b":2}}`,
		`{} {}`, `{}x`, `{"a":}`, `{"a" 1}`, `[1,]`, `{"a":1,}`, `{`, `}`, `[1 2]`, `{"":""}`,
		`{"a":"\u00e9\ud83d\ude00"}`, strings.Repeat("[", 10001) + strings.Repeat("]", 10001),
		strings.Repeat("[", 20) + strings.Repeat("]", 20),
	} {
		f.Add([]byte(s))
	}
	tl := &Tool{Name: "t", cost: costProfile{}}
	f.Fuzz(func(t *testing.T, args []byte) {
		inst, _, values, ok := tl.decodeArgs(args)
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
	})
}
