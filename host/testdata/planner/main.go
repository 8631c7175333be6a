// Command planner is a test-only planner module: a Go reactor exporting
// toolhost_plan through the guest SDK. Its plans are small and
// deterministic; some goals make it misbehave on purpose (spin, exit,
// crash, answer too much) so the host tests can check that a planner is
// sandboxed like a tool.
//
// Build (the host tests do this on demand through internal/testkit/testwasm):
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -o planner.wasm ./host/testdata/planner
package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/toolhost/toolhost/abi/guest"
)

func init() { guest.RegisterPlanner(plan) }

//go:wasmexport toolhost_plan
func toolhostPlan(ptr, n int32) int64 { return guest.PlanExport(ptr, n) }

func main() {}

// plan counts the goal's words and doubles the count; after a not_found it
// falls back to a slug of the goal; after anything else it has no plan.
func plan(in guest.PlanInput) ([]guest.PlanStep, error) {
	switch in.Goal {
	case "spin":
		for {
		}
	case "sleep":
		time.Sleep(time.Hour)
	case "exit":
		os.Exit(3)
	case "crash":
		done := make(chan struct{})
		go func() { // a panic the SDK cannot recover: the runtime dies
			var m map[string]int
			m["boom"] = 1
			close(done)
		}()
		<-done
	case "panic":
		panic("the planner gave up")
	case "error":
		return nil, errors.New("no model available")
	case "huge":
		return []guest.PlanStep{step(1, "text.count", map[string]any{"text": strings.Repeat("x", 2<<20)}, "")}, nil
	case "echo":
		b, _ := json.Marshal(in)
		return []guest.PlanStep{{ID: in.NextID, ToolName: "echo", Args: b}}, nil
	}
	n := in.NextID
	switch {
	case in.LastError == nil:
		return []guest.PlanStep{
			step(n, "text.count", map[string]any{"text": in.Goal}, "count the goal's words"),
			step(n+1, "math.eval", map[string]any{"expr": "words * 2",
				"vars": map[string]any{"words": map[string]string{"$ref": fmt.Sprintf("/steps/%d/result/words", n)}}}, "double it"),
		}, nil
	case in.LastError.Kind == "not_found":
		return []guest.PlanStep{step(n, "text.slug", map[string]any{"text": in.Goal}, "a slug instead")}, nil
	}
	return nil, nil
}

func step(id int, tool string, args map[string]any, expected string) guest.PlanStep {
	b, _ := json.Marshal(args)
	return guest.PlanStep{ID: id, ToolName: tool, Args: b, ExpectedOutcome: expected}
}
