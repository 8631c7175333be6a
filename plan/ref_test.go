package plan

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestParseRef(t *testing.T) {
	tests := []struct {
		in     string
		step   int
		tokens []string
		err    string
	}{
		{"/steps/2/result", 2, nil, ""},
		{"/steps/2/result/words", 2, []string{"words"}, ""},
		{"/steps/10/result/a~1b/~0x/0", 10, []string{"a/b", "~x", "0"}, ""},
		{"/steps/1/result/", 1, []string{""}, ""},
		{"steps/1/result", 0, nil, "must start with /steps/"},
		{"/steps/0/result", 0, nil, "is not a step id"},
		{"/steps/-1/result", 0, nil, "is not a step id"},
		{"/steps/01/result", 0, nil, "is not a step id"},
		{"/steps/99999999999/result", 0, nil, "is not a step id"},
		{"/steps/1", 0, nil, "only a step's result"},
		{"/steps/1/args/x", 0, nil, "only a step's result"},
		{"/steps/1/result/a~", 0, nil, `"~" must be followed`},
	}
	for _, tt := range tests {
		r, err := parseRef(tt.in)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("parseRef(%q) = %+v, %v; want error %q", tt.in, r, err, tt.err)
			}
			continue
		}
		if err != nil || r.step != tt.step || strings.Join(r.tokens, "|") != strings.Join(tt.tokens, "|") || len(r.tokens) != len(tt.tokens) {
			t.Errorf("parseRef(%q) = %+v, %v; want step %d tokens %q", tt.in, r, err, tt.step, tt.tokens)
		}
	}
}

func TestRefLookup(t *testing.T) {
	doc, err := decodeJSON([]byte(`{"words":3,"a/b":{"~x":[10,{"deep":null}]},"big":12345678901234567890}`))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		ref  string
		want string
		err  string
	}{
		{"/steps/1/result", `{"a/b":{"~x":[10,{"deep":null}]},"big":12345678901234567890,"words":3}`, ""},
		{"/steps/1/result/words", `3`, ""},
		{"/steps/1/result/big", `12345678901234567890`, ""},
		{"/steps/1/result/a~1b/~0x/1/deep", `null`, ""},
		{"/steps/1/result/a~1b/~0x/0", `10`, ""},
		{"/steps/1/result/lines", "", `has no member "lines" at the top`},
		{"/steps/1/result/a~1b/~0x/2", "", `no element "2" at /a~1b/~0x (length 2)`},
		{"/steps/1/result/a~1b/~0x/01", "", `no element "01"`},
		{"/steps/1/result/a~1b/~0x/-", "", `no element "-"`},
		{"/steps/1/result/words/x", "", "at /words is a number, which has no member"},
	}
	for _, tt := range tests {
		r, err := parseRef(tt.ref)
		if err != nil {
			t.Fatal(err)
		}
		v, err := r.lookup(doc)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("lookup %s = %v, %v; want error %q", tt.ref, v, err, tt.err)
			}
			continue
		}
		if err != nil || string(encodeJSON(v)) != tt.want {
			t.Errorf("lookup %s = %s, %v; want %s", tt.ref, encodeJSON(v), err, tt.want)
		}
	}
}

// TestResolve checks substitution through the executor's resolve: nested
// references, several in one object, and a pointer that does not resolve
// at dispatch time (it is invalid_plan for that step, before anything is
// dispatched).
func TestResolve(t *testing.T) {
	r := &run{cfg: &Config{}, f: newFolder()}
	r.f.apply(Event{Kind: EventStepStarted, StepID: 1, ToolName: "t", Args: json.RawMessage(`{}`)})
	r.f.apply(Event{Kind: EventStepSucceeded, StepID: 1, Result: json.RawMessage(`{"words":3,"list":["a","b"]}`)})
	args, perr := r.resolve(Step{ID: 2, Args: json.RawMessage(
		`{"n":{"$ref":"/steps/1/result/words"},"x":[{"$ref":"/steps/1/result/list/1"}],"keep":{"$ref":"/steps/1/result","other":1}}`)})
	if perr != nil {
		t.Fatal(perr)
	}
	if want := `{"keep":{"$ref":"/steps/1/result","other":1},"n":3,"x":["b"]}`; string(args) != want {
		t.Errorf("resolved %s, want %s", args, want)
	}
	_, perr = r.resolve(Step{ID: 3, Args: json.RawMessage(`{"n":{"$ref":"/steps/1/result/lines"}}`)})
	if perr == nil || perr.Kind != KindInvalidPlan || perr.StepID != 3 || !strings.Contains(perr.Message, "args/n") {
		t.Errorf("unresolvable pointer gave %v", perr)
	}
}

func TestKey(t *testing.T) {
	args, _ := canonical(json.RawMessage(`{"b":1,"a":"x"}`))
	k := Key("sess", 7, "text.count", args)
	if !strings.HasPrefix(k, "sess:7:text.count:") || len(k) != len("sess:7:text.count:")+32 {
		t.Errorf("key %q", k)
	}
	reordered, _ := canonical(json.RawMessage(`{ "a": "x", "b": 1 }`))
	if Key("sess", 7, "text.count", reordered) != k {
		t.Error("reordering keys changed the idempotency key")
	}
	changed, _ := canonical(json.RawMessage(`{"a":"x","b":2}`))
	if Key("sess", 7, "text.count", changed) == k || Key("other", 7, "text.count", args) == k || Key("sess", 8, "text.count", args) == k {
		t.Error("a different value, session or step gave the same key")
	}
	long := Key(strings.Repeat("s", 64), MaxStepID, strings.Repeat("t", 128), args)
	if len(long) > 255 {
		t.Errorf("longest key is %d bytes, over the dispatcher's 255", len(long))
	}
}
