package plan

import (
	"encoding/json"
	"fmt"

	"github.com/toolhost/toolhost/dispatcher"
)

// Step is one tool call of a plan. A planner sets ID, ToolName, Args,
// ExpectedOutcome and optionally DependsOn; the executor fills in the rest
// in the session's history. Values are plain data, safe to copy; the
// executor never modifies a Step it was given.
type Step struct {
	// ID names the step in the session. IDs increase within a plan and are
	// never reused for another step (see Input.NextID).
	ID int `json:"id" jsonschema:"minimum=1,maximum=1000000000"`
	// ToolName is the tool to call.
	ToolName string `json:"tool_name" jsonschema:"pattern=^[A-Za-z0-9_.-]{1\\,128}$"`
	// Args is the arguments object. A value {"$ref": "/steps/N/result/..."}
	// anywhere inside it is replaced by that part of step N's result before
	// dispatch. In the history, Args are the resolved arguments that were
	// dispatched.
	Args json.RawMessage `json:"args,omitempty" jsonschema:"type=object"`
	// ExpectedOutcome says what the step is for, in words; step events
	// carry it so a trace shows what each step was supposed to do.
	ExpectedOutcome string `json:"expected_outcome,omitempty"`
	// DependsOn lists earlier steps this one must wait for beyond those
	// its references imply (with MaxParallel 1 every step waits for all
	// earlier ones anyway).
	DependsOn []int `json:"depends_on,omitempty"`
	// OnFailure is what the executor does when this step fails; empty
	// means the session's (Session.OnFailure, a plan file's on_failure),
	// and that empty means OnFailureReplan.
	OnFailure OnFailure `json:"on_failure,omitempty"`

	// Result is the tool's result; set in the history on success.
	Result json.RawMessage `json:"result,omitempty"`
	// Error says why the step failed; set in the history on failure.
	Error *Error `json:"error,omitempty"`
	// ReusedFrom is the earlier step whose result this one reused instead
	// of running (partial-plan caching); set in the history.
	ReusedFrom int `json:"reused_from,omitempty"`
	// Revision is the plan revision the step ran in; set in the history.
	Revision int `json:"revision,omitempty"`
}

// ErrorKind classifies a step or plan failure: one of the dispatcher's
// kinds (timeout, transient, schema, not_found, internal,
// budget_exceeded, circuit_open, rate_limited) or one of the executor's own
// below.
type ErrorKind string

// The executor's own error kinds, beside the dispatcher's.
const (
	// KindInvalidPlan: the plan names a step id it may not use, refers to a
	// missing, later or failed step, or is otherwise malformed. It is
	// replannable: the planner gets it as last_error.
	KindInvalidPlan ErrorKind = "invalid_plan"
	// KindPlanner: the planner itself failed (a trap, a timeout, output
	// that is not a plan). It ends the session.
	KindPlanner ErrorKind = "planner"
	// KindSkipped: the step did not run because a step it depends on
	// failed under on_failure skip (or was itself skipped).
	KindSkipped ErrorKind = "skipped"
)

// OnFailure is one of the three ways forward after a step fails. A
// failure that is fatal (budget_exceeded, a session bound) or a
// cancelled session ends the session whatever the step says.
type OnFailure string

// The ways forward.
const (
	// OnFailureReplan, the default: nothing more of the plan is
	// dispatched, the steps in flight finish, and the planner gets the
	// failure as last_error.
	OnFailureReplan OnFailure = "replan"
	// OnFailureAbort: nothing more is dispatched, the steps in flight
	// finish, and the session ends failed with reason aborted.
	OnFailureAbort OnFailure = "abort"
	// OnFailureSkip: the step stays failed in the history and the rest of
	// the plan runs; every step that depends on it (depends_on or a $ref,
	// directly or through other skipped steps) is skipped, with the
	// reason, without running.
	OnFailureSkip OnFailure = "skip"
)

// checkOnFailure says what is wrong with an on_failure value at where, or
// returns nil for a valid one (empty included).
func checkOnFailure(stepID int, where string, o OnFailure) *Error {
	switch o {
	case "", OnFailureReplan, OnFailureAbort, OnFailureSkip:
		return nil
	}
	return invalidf(stepID, `%s %q is not a way forward: use "abort", "skip" or "replan" (the default)`, where, string(o))
}

// Error says why a step or a plan failed. Match a kind with errors.Is
// against a sentinel such as ErrInvalidPlan, or take the whole error with
// errors.As.
type Error struct {
	// Kind classifies the failure.
	Kind ErrorKind `json:"kind"`
	// Message says what went wrong, for a planner (or a model) to act on.
	Message string `json:"message"`
	// Attempts is how many attempts the dispatcher made, when it made any.
	Attempts int `json:"attempts,omitempty"`
	// StepID is the step the error is about, when there is one.
	StepID int `json:"step_id,omitempty"`
}

// Sentinels for errors.Is: an *Error is one of these when the kinds match.
var (
	ErrInvalidPlan = &Error{Kind: KindInvalidPlan}
	ErrPlanner     = &Error{Kind: KindPlanner}
)

func (e *Error) Error() string {
	if e.StepID != 0 {
		return fmt.Sprintf("step %d: %s: %s", e.StepID, e.Kind, e.Message)
	}
	return fmt.Sprintf("%s: %s", e.Kind, e.Message)
}

// Is reports whether target is an *Error of the same kind.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Kind == e.Kind
}

// Fatal reports whether a step failing with this kind ends the session
// instead of going back to the planner. Only budget_exceeded does: the
// caller cannot afford another attempt, so no plan can help. Every other
// kind is replannable: schema and not_found need a different call,
// timeout and transient reach the executor only once the dispatcher's
// retries are spent, and internal, circuit_open and rate_limited may be
// routed around with another tool.
func (k ErrorKind) Fatal() bool {
	return k == ErrorKind(dispatcher.KindBudgetExceeded)
}

func invalidf(stepID int, format string, args ...any) *Error {
	return &Error{Kind: KindInvalidPlan, StepID: stepID, Message: fmt.Sprintf(format, args...)}
}

// Limits are a session's budgets. The zero value means the defaults.
type Limits struct {
	// MaxSteps caps executed steps over the whole session, failed ones
	// included (reused steps are free); 0 means DefaultMaxSteps. The step
	// that would exceed it is refused and the session fails with
	// step_budget.
	MaxSteps int `json:"max_steps"`
	// MaxReplans caps planner calls after the first; 0 means
	// DefaultMaxReplans and a negative value means none.
	MaxReplans int `json:"max_replans"`
	// MaxParallel caps steps in flight; 0 means 1, the sequential
	// executor.
	MaxParallel int `json:"max_parallel"`
}

// Defaults and bounds for Limits and plans.
const (
	DefaultMaxSteps   = 12
	DefaultMaxReplans = 5
	MaxMaxSteps       = 10000
	MaxMaxReplans     = 1000
	MaxMaxParallel    = 64
	// MaxPlanSteps caps the steps of one plan (a file or a planner's
	// answer).
	MaxPlanSteps = 1000
	// MaxStepID is the largest step id.
	MaxStepID = 1_000_000_000
)

// resolve fills in the defaults and clamps to the bounds.
func (l Limits) resolve() Limits {
	switch {
	case l.MaxSteps <= 0:
		l.MaxSteps = DefaultMaxSteps
	case l.MaxSteps > MaxMaxSteps:
		l.MaxSteps = MaxMaxSteps
	}
	switch {
	case l.MaxReplans == 0:
		l.MaxReplans = DefaultMaxReplans
	case l.MaxReplans < 0:
		l.MaxReplans = 0
	case l.MaxReplans > MaxMaxReplans:
		l.MaxReplans = MaxMaxReplans
	}
	l.MaxParallel = min(max(l.MaxParallel, 1), MaxMaxParallel)
	return l
}
