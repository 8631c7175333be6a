package guest

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

func TestPlan(t *testing.T) {
	if got := string(Plan([]byte(`{}`))); !strings.Contains(got, "registers no planner") {
		t.Fatalf("without a planner: %s", got)
	}
	var seen PlanInput
	RegisterPlanner(func(in PlanInput) ([]PlanStep, error) {
		seen = in
		switch in.Goal {
		case "fail":
			return nil, errors.New("no model")
		case "panic":
			panic("boom")
		case "none":
			return nil, nil
		}
		return []PlanStep{{ID: in.NextID, ToolName: "text.count", Args: json.RawMessage(`{"text":"x"}`)}}, nil
	})
	defer func() { planner = nil }()
	tests := []struct{ in, want string }{
		{`{"goal":"g","history":[{"id":1,"tool_name":"t","result":{"a":1}}],"last_error":{"kind":"schema","message":"m","step_id":1},"pending":[],"next_id":2}`,
			`{"steps":[{"id":2,"tool_name":"text.count","args":{"text":"x"}}]}`},
		{`{"goal":"none"}`, `{"steps":[]}`},
		{`{"goal":"fail"}`, `{"error":{"message":"no model"}}`},
		{`{"goal":"panic"}`, `{"error":{"message":"planner panicked: boom"}}`},
		{`not json`, `{"error":{"message":"planner input: invalid character 'o' in literal null (expecting 'u')"}}`},
	}
	for _, tt := range tests {
		if got := string(Plan([]byte(tt.in))); got != tt.want {
			t.Errorf("Plan(%s) = %s, want %s", tt.in, got, tt.want)
		}
	}
	if _, err := json.Marshal(seen); err != nil || seen.Goal != "panic" {
		t.Errorf("last input %+v", seen)
	}
	defer func() {
		if recover() == nil {
			t.Error("a second RegisterPlanner did not panic")
		}
	}()
	RegisterPlanner(func(PlanInput) ([]PlanStep, error) { return nil, nil })
}
