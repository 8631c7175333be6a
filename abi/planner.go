package abi

import "encoding/json"

// ExportPlan is the planner export, `(ptr, len i32) -> i64`: it reads the
// planner input JSON ({"goal", "history", "last_error", "pending",
// "next_id"}) from the len bytes at ptr, which the host wrote into memory
// obtained from toolhost_alloc, and returns the packed pointer and length of
// its output JSON, {"steps": [...]} or {"error": {"message": "..."}}. A
// planner module exports memory, toolhost_abi_version, toolhost_alloc and
// toolhost_plan; it need not export the tool functions. See docs/ABI.md.
const ExportPlan = "toolhost_plan"

// PlanInput is the document a planner receives: the goal, the steps that
// ran (with results or errors), the error that made the executor ask (nil
// on the first call), the steps of the current plan that have not run, and
// the smallest id a new step may take.
type PlanInput struct {
	Goal      string     `json:"goal"`
	History   []PlanStep `json:"history"`
	LastError *PlanError `json:"last_error"`
	Pending   []PlanStep `json:"pending"`
	NextID    int        `json:"next_id"`
}

// PlanStep is one step of a plan. A planner sets ID, ToolName, Args,
// ExpectedOutcome and optionally DependsOn and OnFailure; the other fields
// come back in the history. An argument value {"$ref":
// "/steps/N/result/..."} is replaced by that part of step N's result
// before dispatch.
type PlanStep struct {
	ID              int             `json:"id"`
	ToolName        string          `json:"tool_name"`
	Args            json.RawMessage `json:"args,omitempty"`
	ExpectedOutcome string          `json:"expected_outcome,omitempty"`
	DependsOn       []int           `json:"depends_on,omitempty"`
	// OnFailure is what the executor does when the step fails: "abort",
	// "skip" or "replan"; empty means the session's (replan by default).
	OnFailure  string          `json:"on_failure,omitempty"`
	Result     json.RawMessage `json:"result,omitempty"`
	Error      *PlanError      `json:"error,omitempty"`
	ReusedFrom int             `json:"reused_from,omitempty"`
	Revision   int             `json:"revision,omitempty"`
}

// PlanError says why a step or a plan failed: a dispatcher kind (timeout,
// transient, schema, not_found, internal, ...) or invalid_plan.
type PlanError struct {
	Kind     string `json:"kind"`
	Message  string `json:"message"`
	Attempts int    `json:"attempts,omitempty"`
	StepID   int    `json:"step_id,omitempty"`
}

// PlanOutput is the document a planner returns: exactly one of Steps (an
// empty list means "no plan") and Error.
type PlanOutput struct {
	Steps *[]PlanStep      `json:"steps,omitempty"`
	Error *PlanOutputError `json:"error,omitempty"`
}

// PlanOutputError is a planner's own failure; it ends the session.
type PlanOutputError struct {
	Message string `json:"message"`
}
