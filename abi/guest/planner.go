package guest

import (
	"encoding/json"
	"fmt"
	"os"
	"runtime/debug"
)

// PlanInput is what a planner receives: the goal, the steps that ran (with
// results or errors), the error that made the executor ask (nil on the
// first call), the steps of the current plan that have not run, and the
// smallest id a new step may take.
type PlanInput struct {
	Goal      string     `json:"goal"`
	History   []PlanStep `json:"history"`
	LastError *PlanError `json:"last_error"`
	Pending   []PlanStep `json:"pending"`
	NextID    int        `json:"next_id"`
}

// PlanStep is one step of a plan. A planner sets ID, ToolName, Args,
// ExpectedOutcome and optionally DependsOn; the other fields come back in
// the history. An argument value {"$ref": "/steps/N/result/..."} is
// replaced by that part of step N's result before dispatch.
type PlanStep struct {
	ID              int             `json:"id"`
	ToolName        string          `json:"tool_name"`
	Args            json.RawMessage `json:"args,omitempty"`
	ExpectedOutcome string          `json:"expected_outcome,omitempty"`
	DependsOn       []int           `json:"depends_on,omitempty"`
	Result          json.RawMessage `json:"result,omitempty"`
	Error           *PlanError      `json:"error,omitempty"`
	ReusedFrom      int             `json:"reused_from,omitempty"`
	Revision        int             `json:"revision,omitempty"`
}

// PlanError says why a step or a plan failed: a dispatcher kind
// (timeout, transient, schema, not_found, internal, ...) or invalid_plan.
type PlanError struct {
	Kind     string `json:"kind"`
	Message  string `json:"message"`
	Attempts int    `json:"attempts,omitempty"`
	StepID   int    `json:"step_id,omitempty"`
}

var (
	planner  func(PlanInput) ([]PlanStep, error)
	lastPlan []byte // the last output, referenced until the next call
)

// RegisterPlanner makes fn the module's planner. Returning no steps means
// "no plan"; an error is reported to the host as a planner failure, which
// ends the session. Call it from init, and export the entry point from the
// main package (the SDK cannot: every tool module would then look like a
// planner):
//
//	//go:wasmexport toolhost_plan
//	func toolhostPlan(ptr, n int32) int64 { return guest.PlanExport(ptr, n) }
//
// RegisterPlanner panics when called twice.
func RegisterPlanner(fn func(PlanInput) ([]PlanStep, error)) {
	if planner != nil {
		panic("guest.RegisterPlanner: a planner is already registered")
	}
	planner = fn
}

// Plan runs the registered planner on an input document and returns the
// output document, {"steps": [...]} or {"error": {"message": "..."}}. It
// is what toolhost_plan does; it is exported so planners can be tested
// natively.
func Plan(input []byte) []byte {
	steps, err := plan(input)
	var out any = map[string]any{"steps": steps}
	if err != nil {
		out = map[string]any{"error": map[string]string{"message": err.Error()}}
	}
	b, merr := json.Marshal(out)
	if merr != nil {
		b, _ = json.Marshal(map[string]any{"error": map[string]string{"message": "encoding the plan: " + merr.Error()}})
	}
	return b
}

func plan(input []byte) (steps []PlanStep, err error) {
	defer func() {
		if r := recover(); r != nil {
			fmt.Fprintf(os.Stderr, "planner panicked: %v\n%s", r, debug.Stack())
			steps, err = nil, fmt.Errorf("planner panicked: %v", r)
		}
	}()
	if planner == nil {
		return nil, fmt.Errorf("this module registers no planner (guest.RegisterPlanner)")
	}
	var in PlanInput
	if err := json.Unmarshal(input, &in); err != nil {
		return nil, fmt.Errorf("planner input: %v", err)
	}
	steps, err = planner(in)
	if steps == nil {
		steps = []PlanStep{}
	}
	return steps, err
}

// PlanExport implements the toolhost_plan export over guest memory: it
// reads the n input bytes at ptr (a buffer toolhost_alloc handed out) and
// returns the packed pointer and length of the output, which stays valid
// until the next call. Call it only from a //go:wasmexport function in a
// WebAssembly build; natively it panics.
func PlanExport(ptr, n int32) int64 { return planExport(ptr, n) }
