package transport

import (
	"encoding/json"
	"reflect"
	"testing"
)

// FuzzParseOptions: whatever a client puts in a tools/call _meta,
// parseOptions does not panic, answers the same twice, and accepts only
// options inside the contract's ranges. The seed corpus is in
// testdata/fuzz/FuzzParseOptions/.
func FuzzParseOptions(f *testing.F) {
	f.Fuzz(func(t *testing.T, b []byte) {
		var meta map[string]any
		if json.Unmarshal(b, &meta) != nil {
			return
		}
		o, err := parseOptions(meta)
		o2, err2 := parseOptions(meta)
		if (err == nil) != (err2 == nil) || !reflect.DeepEqual(o, o2) {
			t.Fatalf("%s: not deterministic: %+v, %v then %+v, %v", b, o, err, o2, err2)
		}
		if err != nil {
			return
		}
		if _, ok := meta[MetaIdempotencyKey]; ok && (o.IdempotencyKey == "" || len(o.IdempotencyKey) > MaxIdempotencyKeyLen) {
			t.Fatalf("%s: accepted key %q", b, o.IdempotencyKey)
		}
		if _, ok := meta[MetaTimeoutMS]; ok && o.Timeout <= 0 {
			t.Fatalf("%s: accepted timeout %v", b, o.Timeout)
		}
		if o.Budget != nil && *o.Budget < 0 {
			t.Fatalf("%s: accepted budget %d", b, *o.Budget)
		}
	})
}
