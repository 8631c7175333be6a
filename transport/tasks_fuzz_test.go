package transport

import (
	"bytes"
	"encoding/json"
	"testing"
)

// FuzzLiftTaskParam: whatever params a tools/call carries, liftTaskParam
// does not panic; when it lifts, the result is a JSON object without
// "task", whose _meta holds the task exactly as sent, and every other
// member is unchanged.
func FuzzLiftTaskParam(f *testing.F) {
	for _, s := range []string{
		`{"name":"t","task":{"ttl":1000}}`,
		`{"name":"t","task":{},"_meta":{"progressToken":1}}`,
		`{"name":"t","task":null}`,
		`{"name":"t","task":{},"_meta":[1]}`,
		`{"name":"t","arguments":{"n":12345678901234567890},"task":{"ttl":1e300}}`,
		`[]`, `null`, `{"task":`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		out, lifted := liftTaskParam(b)
		if !lifted {
			if !bytes.Equal(out, b) {
				t.Fatalf("%s: changed without lifting: %s", b, out)
			}
			return
		}
		var in, got map[string]json.RawMessage
		if json.Unmarshal(b, &in) != nil || json.Unmarshal(out, &got) != nil {
			t.Fatalf("%s: lifted into %s", b, out)
		}
		if _, ok := got["task"]; ok {
			t.Fatalf("%s: task left in %s", b, out)
		}
		var meta map[string]json.RawMessage
		if json.Unmarshal(got["_meta"], &meta) != nil || !jsonEqual(meta[MetaTask], in["task"]) {
			t.Fatalf("%s: _meta %s does not hold the task", b, got["_meta"])
		}
		for k, v := range in {
			if k != "task" && k != "_meta" && !jsonEqual(got[k], v) {
				t.Fatalf("%s: member %q changed to %s", b, k, got[k])
			}
		}
	})
}

// jsonEqual compares two JSON texts token for token (white space aside):
// numbers must keep their digits.
func jsonEqual(a, b json.RawMessage) bool {
	var ca, cb bytes.Buffer
	return json.Compact(&ca, a) == nil && json.Compact(&cb, b) == nil && bytes.Equal(ca.Bytes(), cb.Bytes())
}
