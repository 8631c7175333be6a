package plan

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/toolhost/toolhost/abi"
)

// The executor's Input and Step are the ABI's planner documents with more
// Go behind them: what it sends a WebAssembly planner must decode into
// abi.PlanInput with nothing unknown and nothing lost, and what the SDK
// encodes as abi.PlanOutput must parse.
func TestWireMatchesABI(t *testing.T) {
	in := Input{
		Goal: "g",
		History: []Step{{ID: 1, ToolName: "a.b", Args: json.RawMessage(`{"x":1}`), ExpectedOutcome: "e",
			DependsOn: []int{}, Result: json.RawMessage(`{"y":2}`), ReusedFrom: 0, Revision: 1},
			{ID: 2, ToolName: "c", Error: &Error{Kind: "timeout", Message: "m", Attempts: 3, StepID: 2}, Revision: 1}},
		LastError: &Error{Kind: "timeout", Message: "m", Attempts: 3, StepID: 2},
		Pending:   []Step{{ID: 3, ToolName: "d", DependsOn: []int{1}, OnFailure: OnFailureSkip}},
		NextID:    4,
	}
	ours, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(bytes.NewReader(ours))
	dec.DisallowUnknownFields()
	var wire abi.PlanInput
	if err := dec.Decode(&wire); err != nil {
		t.Fatalf("the executor sends fields the ABI does not define: %v", err)
	}
	theirs, _ := json.Marshal(wire)
	var a, b any
	json.Unmarshal(ours, &a)
	json.Unmarshal(theirs, &b)
	if ja, jb := mustJSON(a), mustJSON(b); ja != jb {
		t.Fatalf("lost in the ABI's types:\nexecutor %s\nabi      %s", ja, jb)
	}

	steps := []abi.PlanStep{{ID: 5, ToolName: "t", Args: json.RawMessage(`{}`), ExpectedOutcome: "x", OnFailure: "abort"}}
	out, _ := json.Marshal(abi.PlanOutput{Steps: &steps})
	got, err := parseOutput(out)
	if err != nil || len(got) != 1 || got[0].ID != 5 || got[0].ToolName != "t" || got[0].OnFailure != OnFailureAbort {
		t.Fatalf("abi.PlanOutput %s parsed as %+v, %v", out, got, err)
	}
	failed, _ := json.Marshal(abi.PlanOutput{Error: &abi.PlanOutputError{Message: "no idea"}})
	if _, err := parseOutput(failed); err == nil {
		t.Fatalf("a planner error %s was not reported", failed)
	}
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
