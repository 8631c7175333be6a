package guest

import (
	"encoding/json"
	"fmt"
	"os"
	"runtime/debug"

	"github.com/toolhost/toolhost/abi/guest/abi"
)

// The planner documents are the wire contract's (package abi); they are
// aliased here so a planner imports one package.
type (
	// PlanInput is what a planner receives (abi.PlanInput).
	PlanInput = abi.PlanInput
	// PlanStep is one step of a plan (abi.PlanStep).
	PlanStep = abi.PlanStep
	// PlanError says why a step or a plan failed (abi.PlanError).
	PlanError = abi.PlanError
)

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
	out := abi.PlanOutput{Steps: &steps}
	if err != nil {
		out = abi.PlanOutput{Error: &abi.PlanOutputError{Message: err.Error()}}
	}
	b, merr := json.Marshal(out)
	if merr != nil {
		b, _ = json.Marshal(abi.PlanOutput{Error: &abi.PlanOutputError{Message: "encoding the plan: " + merr.Error()}})
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
