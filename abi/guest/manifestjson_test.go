package guest

import (
	"encoding/json"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"

	"github.com/toolhost/toolhost/abi/guest/abi"
)

// TestManifestJSONMatchesMarshal: manifestJSON writes what json.Marshal
// writes, on random manifests (every field, schemas that must and must
// not be copied as they are, offers and icons), and takes its own way
// often. Its field lists fail the test when abi.Manifest or abi.ToolSpec
// gains a field appendManifest does not write.
func TestManifestJSONMatchesMarshal(t *testing.T) {
	for typ, known := range map[reflect.Type][]string{
		reflect.TypeFor[abi.Manifest](): {"ABI", "TimeoutMS", "Idempotent", "ReadOnly", "Tools", "Listing", "DynamicOffers"},
		reflect.TypeFor[abi.ToolSpec](): {"Name", "Title", "Description", "InputSchema", "OutputSchema", "TimeoutMS",
			"Idempotent", "ReadOnly", "Destructive", "Instances", "Icons"},
		reflect.TypeFor[abi.Listing](): {"Resources", "ResourceTemplates", "Prompts"}, // Empty() sends them to json.Marshal
	} {
		for f := range typ.Fields() {
			if !slices.Contains(known, f.Name) {
				t.Errorf("%v.%s is new: write it in appendManifest (or leave manifests with it to json.Marshal), then list it here", typ, f.Name)
			}
		}
	}
	r := rand.New(rand.NewPCG(3, 4))
	var direct int
	const n = 3000
	for i := range n {
		m := randomManifest(r)
		want, wantErr := json.Marshal(m)
		got, err := manifestJSON(m)
		if (err != nil) != (wantErr != nil) || string(got) != string(want) {
			t.Fatalf("manifest %d: manifestJSON = %s, %v\njson.Marshal:  %s, %v", i, got, err, want, wantErr)
		}
		if _, ok := appendManifest(nil, m); ok {
			direct++
		}
	}
	if direct < n/4 || direct > n*3/4 {
		t.Fatalf("%d of %d manifests written directly: the random manifests miss a path", direct, n)
	}
}

func randomManifest(r *rand.Rand) *abi.Manifest {
	pick := func(l ...string) string { return l[r.IntN(len(l))] }
	optInt := func() *int {
		if r.IntN(2) == 0 {
			return nil
		}
		return new(r.IntN(100000) - 10)
	}
	optBool := func() *bool {
		if r.IntN(2) == 0 {
			return nil
		}
		return new(r.IntN(2) == 0)
	}
	schema := func() json.RawMessage {
		if r.IntN(40) == 0 {
			return nil
		}
		return json.RawMessage(pick(`{"type":"object"}`, `{"properties":{"a b":{"type":"string","description":"x y"}}}`,
			`{"description":"a\"<b>\\\""}`, "{\"description\":\"\u2029\u2028\"}", `{"properties":{"<":{}}}`, `{ "type": "object" }`,
			"{\"type\":\"object\"}\n", `{"enum":["\\u003c","é"]}`, `{"description":"\\\\"}`))
	}
	m := &abi.Manifest{ABI: abi.Version, TimeoutMS: optInt(), Idempotent: optBool(), ReadOnly: optBool(), DynamicOffers: r.IntN(3) == 0}
	if r.IntN(30) > 0 {
		m.Tools = make([]abi.ToolSpec, r.IntN(4))
	}
	for i := range m.Tools {
		m.Tools[i] = abi.ToolSpec{
			Name: pick("a.b", "x", "<&>"), Title: pick("", "T", "q\"uote"), Description: pick("", "d e", "line\nbreak", "bad\xff"),
			InputSchema: schema(), TimeoutMS: optInt(), Idempotent: optBool(), ReadOnly: optBool(), Destructive: optBool(),
			Instances: abi.Instances(pick("", string(abi.InstancesReuse), string(abi.InstancesFresh))),
		}
		if r.IntN(2) == 0 {
			m.Tools[i].OutputSchema = schema()
		}
		if r.IntN(20) == 0 {
			m.Tools[i].Icons = []abi.Icon{{Src: "https://example.com/i.png"}}
		}
	}
	if r.IntN(20) == 0 {
		m.Prompts = []abi.Prompt{{Name: "p"}}
	}
	return m
}
