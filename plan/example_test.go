package plan_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/toolhost/toolhost/dispatcher"
	"github.com/toolhost/toolhost/plan"
	"github.com/toolhost/toolhost/registry"
)

// A two-step plan through a real dispatcher: the second step's argument
// is a reference to the first step's result.
func ExampleExecutor_Run() {
	count := registry.HandlerFunc(func(_ context.Context, args json.RawMessage) (json.RawMessage, error) {
		var in struct{ Text string }
		_ = json.Unmarshal(args, &in)
		return json.Marshal(map[string]int{"words": len(strings.Fields(in.Text))})
	})
	double := registry.HandlerFunc(func(_ context.Context, args json.RawMessage) (json.RawMessage, error) {
		var in struct{ N int }
		_ = json.Unmarshal(args, &in)
		return json.Marshal(map[string]int{"value": 2 * in.N})
	})
	obj := json.RawMessage(`{"type":"object"}`)
	reg, _ := registry.New([]*registry.Tool{
		{Name: "count", InputSchema: obj, Timeout: time.Second, ReadOnly: true, Handler: count},
		{Name: "double", InputSchema: obj, Timeout: time.Second, Handler: double},
	})
	file, err := plan.ParseFile([]byte(`{"goal": "twice the words", "steps": [
		{"id": 1, "tool_name": "count", "args": {"text": "plan execute replan"}},
		{"id": 2, "tool_name": "double", "args": {"n": {"$ref": "/steps/1/result/words"}}}]}`))
	if err != nil {
		fmt.Println(err)
		return
	}
	exec := plan.New(plan.Config{Dispatcher: dispatcher.New(reg, dispatcher.Config{}), Planner: plan.Static(file.Steps)})
	res, _ := exec.Run(context.Background(), plan.Session{Goal: file.Goal, Limits: file.Limits()})
	fmt.Println(res.Status, res.Reason)
	for _, s := range res.History {
		fmt.Printf("step %d %s %s -> %s\n", s.ID, s.ToolName, s.Args, s.Result)
	}
	// Output:
	// completed goal_met
	// step 1 count {"text":"plan execute replan"} -> {"words":3}
	// step 2 double {"n":3} -> {"value":6}
}
