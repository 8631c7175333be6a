package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/toolhost/toolhost/internal/testkit/testwasm"
)

// inspect refuses what serve would, with the same words: a schema that
// cannot be served names the module, the tool and the JSON Pointer.
func TestInspectRefusesUnservableSchema(t *testing.T) {
	wasm := testwasm.WAT(t, "host/testdata/wat/badschema.wat")
	var stdout, stderr bytes.Buffer
	if code := doMain([]string{"inspect", "--cache-dir", "off", wasm}, strings.NewReader(""), &stdout, &stderr); code != 1 {
		t.Fatalf("exit %d, want 1; stdout %s stderr %s", code, &stdout, &stderr)
	}
	for _, want := range []string{wasm, `tool "wat.badschema"`, "input_schema at /properties/doc/anyOf/1", "got a number"} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("stderr %q does not name %q", &stderr, want)
		}
	}
}

// inspect prints what serve would list: schemas in normal form and the
// resolved destructive and instances.
func TestInspectPrintsNormalForm(t *testing.T) {
	wasm := testwasm.WAT(t, "host/testdata/wat/boolschema.wat")
	var stdout, stderr bytes.Buffer
	if code := doMain([]string{"inspect", "--cache-dir", "off", wasm}, strings.NewReader(""), &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d; stderr %s", code, &stderr)
	}
	var out struct {
		Tools []struct {
			InputSchema  json.RawMessage `json:"input_schema"`
			OutputSchema json.RawMessage `json:"output_schema"`
			Destructive  *bool           `json:"destructive"`
			Instances    string          `json:"instances"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &out); err != nil || len(out.Tools) != 1 {
		t.Fatalf("output %s: %v", &stdout, err)
	}
	tl := out.Tools[0]
	var in, res bytes.Buffer
	_ = json.Compact(&in, tl.InputSchema)
	_ = json.Compact(&res, tl.OutputSchema)
	if in.String() != `{"type":"object","properties":{"doc":{},"tags":{"type":"array","items":true}},"additionalProperties":false}` {
		t.Errorf("input schema %s", &in)
	}
	if res.String() != `{"type":"object","properties":{"value":{}},"required":["value"],"additionalProperties":false}` {
		t.Errorf("output schema %s", &res)
	}
	if tl.Destructive == nil || *tl.Destructive || tl.Instances != "reuse" {
		t.Errorf("destructive %v instances %q, want false and reuse", tl.Destructive, tl.Instances)
	}
}
