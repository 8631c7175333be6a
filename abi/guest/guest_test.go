package guest_test

import (
	"encoding/json"
	"testing"

	"github.com/toolhost/toolhost/abi/guest"
	"github.com/toolhost/toolhost/abi/guest/abi"
)

type anyArgs struct {
	Doc  any               `json:"doc"`
	Tags map[string]any    `json:"tags,omitempty"`
	List []any             `json:"list,omitempty"`
	Meta map[string]string `json:"meta,omitempty"`
}

type anyResult struct {
	Value any `json:"value"`
}

// The SDK writes manifests every MCP client accepts (a field of type any is
// {}, a closed struct's additionalProperties false), and lets an
// author set destructive, instances and icons.
func TestManifestSchemasAndOptions(t *testing.T) {
	icon := abi.Icon{Src: "https://example.com/t.png", MIMEType: "image/png", Sizes: []string{"32x32"}}
	guest.Register("sdk.get", guest.Options{Title: "Get", ReadOnly: true, Instances: abi.InstancesReuse},
		func(a anyArgs) (anyResult, error) { return anyResult{Value: a.Doc}, nil })
	guest.Register("sdk.append", guest.Options{Title: "Append", Destructive: new(false), Icons: []abi.Icon{icon}},
		func(a anyArgs) (anyResult, error) { return anyResult{}, nil })
	guest.Register("sdk.wipe", guest.Options{Title: "Wipe"},
		func(a anyArgs) (anyResult, error) { return anyResult{}, nil })

	raw := guest.Manifest()
	var doc struct {
		Tools []struct {
			Name         string          `json:"name"`
			InputSchema  json.RawMessage `json:"input_schema"`
			OutputSchema json.RawMessage `json:"output_schema"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	for _, tl := range doc.Tools {
		for _, s := range []json.RawMessage{tl.InputSchema, tl.OutputSchema} {
			if p, found := abi.FirstBooleanPropertySchema(s); found {
				t.Errorf("%s: boolean subschema at %s: %s", tl.Name, p, s)
			}
		}
	}
	var out struct {
		Properties map[string]json.RawMessage `json:"properties"`
	}
	// By name: other tests of the package register tools of their own,
	// before this one or after.
	var get json.RawMessage
	for _, tl := range doc.Tools {
		if tl.Name == "sdk.get" {
			get = tl.OutputSchema
		}
	}
	if err := json.Unmarshal(get, &out); err != nil || string(out.Properties["value"]) != `{}` {
		t.Errorf("sdk.get's output schema %s: value is not {}", get)
	}

	m, err := abi.ParseManifest(raw)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]abi.Tool{}
	for _, tl := range m.Resolve() {
		got[tl.Name] = tl
	}
	if g := got["sdk.get"]; g.Destructive || g.Instances != abi.InstancesReuse {
		t.Errorf("sdk.get: destructive %v instances %q", g.Destructive, g.Instances)
	}
	if g := got["sdk.append"]; g.Destructive || g.Instances != abi.InstancesFresh || len(g.Icons) != 1 || g.Icons[0].Src != icon.Src {
		t.Errorf("sdk.append: destructive %v instances %q icons %+v", g.Destructive, g.Instances, g.Icons)
	}
	if g := got["sdk.wipe"]; !g.Destructive {
		t.Error("sdk.wipe: not destructive by default")
	}
}

// spaced is a result whose own encoding is not compact.
type spaced struct{}

func (spaced) MarshalJSON() ([]byte, error) { return []byte(`{ "a" : [ 1, "<&>" ] }`), nil }

// Dispatch writes a success envelope by hand; it must be byte for byte the
// json.Marshal of abi.Response it replaced, whatever the result.
func TestDispatchEnvelopeMatchesMarshal(t *testing.T) {
	results := map[string]any{
		"null": nil, "string": "a <b> & \u2028 \"q\"", "number": 1.5e300, "map": map[string]any{"z": 1, "a": []int{}},
		"spaced": spaced{}, "raw": json.RawMessage(`[1, 2]`), "struct": anyResult{Value: "<x>"},
	}
	for name, r := range results {
		tool := "sdk.envelope." + name
		guest.Register(tool, guest.Options{}, func(struct{}) (any, error) { return r, nil })
		b, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		want, err := json.Marshal(abi.Response{Result: b})
		if err != nil {
			t.Fatal(err)
		}
		if got := guest.Dispatch(tool, nil); string(got) != string(want) {
			t.Errorf("%s: Dispatch = %s, json.Marshal gives %s", name, got, want)
		}
	}
}
