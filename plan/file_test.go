package plan

import (
	"errors"
	"strings"
	"testing"
)

func TestParseFile(t *testing.T) {
	tests := []struct {
		name string
		in   string
		err  string // substring of the error; "" means it parses
	}{
		{"goal only", `{"goal":"g"}`, ""},
		{"full", `{"goal":"g","steps":[{"id":1,"tool_name":"text.count","args":{"text":"a"},"expected_outcome":"n"},
			{"id":3,"tool_name":"math.eval","args":{"expr":"w","vars":{"w":{"$ref":"/steps/1/result/words"}}},"depends_on":[1]}],
			"max_steps":3,"max_replans":0,"max_parallel":2,"session_id":"run-1"}`, ""},
		{"null args", `{"goal":"g","steps":[{"id":1,"tool_name":"t","args":null}]}`, ""},
		{"ref with siblings is a value", `{"goal":"g","steps":[{"id":1,"tool_name":"t","args":{"s":{"$ref":"#/x","type":"string"}}}]}`, ""},
		{"not JSON", `{"goal":`, "plan file"},
		{"not an object", `[]`, "plan file"},
		{"trailing data", `{"goal":"g"} {}`, "trailing data"},
		{"trailing bracket", `{"goal":"g"}]`, "trailing data"},
		{"unknown field", `{"goal":"g","stpes":[]}`, `unknown field "stpes"`},
		{"unknown step field", `{"goal":"g","steps":[{"id":1,"tool_name":"t","tool":"x"}]}`, `unknown field steps[0]."tool"`},
		{"field name in another case", `{"Goal":"g"}`, `unknown field "Goal"`},
		{"step field in another case", `{"goal":"g","steps":[{"id":1,"Tool_Name":"t"}]}`, `unknown field steps[0]."Tool_Name"`},
		{"repeated field", `{"goal":"g","goal":"h"}`, `field "goal" appears twice`},
		{"repeated step field", `{"goal":"g","steps":[{"id":1,"id":2,"tool_name":"t"}]}`, `field steps[0]."id" appears twice`},
		{"no goal", `{"steps":[]}`, "goal is required"},
		{"blank goal", `{"goal":"  "}`, "goal is required"},
		{"max_steps 0", `{"goal":"g","max_steps":0}`, "max_steps must be between 1 and 10000"},
		{"max_steps huge", `{"goal":"g","max_steps":10001}`, "max_steps"},
		{"max_replans negative", `{"goal":"g","max_replans":-1}`, "max_replans"},
		{"max_parallel 0", `{"goal":"g","max_parallel":0}`, "max_parallel"},
		{"max_parallel fraction", `{"goal":"g","max_parallel":1.5}`, "plan file"},
		{"bad session id", `{"goal":"g","session_id":"a:b"}`, "session_id"},
		{"id 0", `{"goal":"g","steps":[{"id":0,"tool_name":"t"}]}`, "id 0 is not between"},
		{"ids not increasing", `{"goal":"g","steps":[{"id":2,"tool_name":"t"},{"id":2,"tool_name":"u"}]}`, "ids must increase"},
		{"bad tool name", `{"goal":"g","steps":[{"id":1,"tool_name":"a b"}]}`, "is not a tool name"},
		{"args array", `{"goal":"g","steps":[{"id":1,"tool_name":"t","args":[1]}]}`, "args must be a JSON object, got a array"},
		{"args string", `{"goal":"g","steps":[{"id":1,"tool_name":"t","args":"x"}]}`, "args must be a JSON object"},
		{"result set", `{"goal":"g","steps":[{"id":1,"tool_name":"t","result":1}]}`, "set by the executor"},
		{"error set", `{"goal":"g","steps":[{"id":1,"tool_name":"t","error":{"kind":"x","message":"y"}}]}`, "set by the executor"},
		{"ref to later step", `{"goal":"g","steps":[{"id":1,"tool_name":"t","args":{"a":{"$ref":"/steps/2/result"}}},{"id":2,"tool_name":"t"}]}`, "comes later"},
		{"ref to itself", `{"goal":"g","steps":[{"id":1,"tool_name":"t","args":{"a":{"$ref":"/steps/1/result"}}}]}`, "the step itself"},
		{"ref to missing step", `{"goal":"g","steps":[{"id":2,"tool_name":"t","args":{"a":{"$ref":"/steps/1/result"}}}]}`, "neither an earlier step"},
		{"ref to missing later id", `{"goal":"g","steps":[{"id":1,"tool_name":"t","args":{"a":{"$ref":"/steps/9/result"}}}]}`, "neither an earlier step"},
		{"ref not a string", `{"goal":"g","steps":[{"id":1,"tool_name":"t","args":{"a":{"$ref":5}}}]}`, `"$ref" must be a string`},
		{"ref bad prefix", `{"goal":"g","steps":[{"id":2,"tool_name":"t","args":{"a":{"$ref":"#/steps/1"}}}]}`, "must start with /steps/"},
		{"ref to args", `{"goal":"g","steps":[{"id":1,"tool_name":"t"},{"id":2,"tool_name":"t","args":{"a":{"$ref":"/steps/1/args"}}}]}`, "only a step's result"},
		{"ref leading zero", `{"goal":"g","steps":[{"id":1,"tool_name":"t"},{"id":2,"tool_name":"t","args":{"a":{"$ref":"/steps/01/result"}}}]}`, "is not a step id"},
		{"ref bad escape", `{"goal":"g","steps":[{"id":1,"tool_name":"t"},{"id":2,"tool_name":"t","args":{"a":{"$ref":"/steps/1/result/a~2"}}}]}`, `"~" must be followed`},
		{"ref deep in an array", `{"goal":"g","steps":[{"id":1,"tool_name":"t","args":{"a":[0,{"b":{"$ref":"/steps/3/result"}}]}}]}`, "args/a/1/b refers to step 3"},
		{"depends_on later", `{"goal":"g","steps":[{"id":1,"tool_name":"t","depends_on":[2]},{"id":2,"tool_name":"t"}]}`, "depends_on refers to step 2, which comes later"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := ParseFile([]byte(tt.in))
			if tt.err == "" {
				if err != nil {
					t.Fatalf("ParseFile: %v", err)
				}
				if f.Goal == "" {
					t.Fatal("no goal")
				}
				return
			}
			if err == nil {
				t.Fatalf("ParseFile accepted %s", tt.in)
			}
			if !errors.Is(err, ErrInvalidPlan) {
				t.Errorf("error %v is not ErrInvalidPlan", err)
			}
			if !strings.Contains(err.Error(), tt.err) {
				t.Errorf("error %q does not say %q", err, tt.err)
			}
		})
	}
}

func TestFileLimits(t *testing.T) {
	f, err := ParseFile([]byte(`{"goal":"g","max_steps":3,"max_replans":0,"max_parallel":4}`))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := f.Limits().resolve(), (Limits{MaxSteps: 3, MaxReplans: 0, MaxParallel: 4}); got != want {
		t.Errorf("limits %+v, want %+v (max_replans 0 means none)", got, want)
	}
	f, _ = ParseFile([]byte(`{"goal":"g"}`))
	if got, want := f.Limits().resolve(), (Limits{MaxSteps: 12, MaxReplans: 5, MaxParallel: 1}); got != want {
		t.Errorf("default limits %+v, want %+v", got, want)
	}
}

func TestCanonicalArgs(t *testing.T) {
	f, err := ParseFile([]byte(`{"goal":"g","steps":[{"id":1,"tool_name":"t","args":{ "b": 1.50, "a": "<&>" }}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(f.Steps[0].Args), `{"a":"<&>","b":1.50}`; got != want {
		t.Errorf("args %s, want %s (keys sorted, numbers and text as written)", got, want)
	}
}
