package plan

import (
	"bytes"
	"encoding/json"
	"io"
	"time"
)

// EventKind names what an Event records.
type EventKind string

// The event kinds, in the order a session produces them. Every planner call
// ends in exactly one plan.* event.
const (
	// EventSessionStart opens the log: session id, goal and budgets.
	EventSessionStart EventKind = "session.start"
	// EventPlanDiff records a plan the executor adopted as a new revision:
	// its steps, what changed from the previous revision's steps that had
	// not run (removed, added, revised: tool_name or args changed), and the
	// error that caused the replan.
	EventPlanDiff EventKind = "plan.diff"
	// EventPlanRejected records a plan refused as invalid_plan before
	// anything in it ran.
	EventPlanRejected EventKind = "plan.rejected"
	// EventPlanEmpty records a planner call that returned no steps.
	EventPlanEmpty EventKind = "plan.empty"
	// EventPlanError records a planner call that failed.
	EventPlanError EventKind = "plan.error"
	// EventStepStarted records a dispatch: the step is charged to the
	// MaxSteps budget here.
	EventStepStarted EventKind = "step.started"
	// EventStepRetry records a retry the dispatcher made for a step.
	EventStepRetry EventKind = "step.retry"
	// EventStepSucceeded records a step's result.
	EventStepSucceeded EventKind = "step.succeeded"
	// EventStepFailed records a step's error, and whether it is fatal. A
	// step whose references do not resolve fails without a step.started.
	EventStepFailed EventKind = "step.failed"
	// EventStepReused records a step answered from an identical earlier
	// step's result, not run and not charged.
	EventStepReused EventKind = "step.reused"
	// EventStepRefused records the step that would have exceeded MaxSteps.
	EventStepRefused EventKind = "step.refused"
	// EventStepSkipped records a step that did not run because a step it
	// depends on failed under on_failure skip (or was skipped): its error
	// (kind skipped) names that step. It is not charged to MaxSteps.
	EventStepSkipped EventKind = "step.skipped"
	// EventSessionEnd closes the log with the status and reason.
	EventSessionEnd EventKind = "session.end"
)

// Event is one entry of a session's log. Seq, Revision, StepID (0 for
// events not about one step) and Kind are always meaningful; the other
// fields are set by the kinds their comments name. Events are plain data.
type Event struct {
	// Seq numbers the session's events from 1.
	Seq uint64 `json:"seq"`
	// Revision is the plan revision in force (0 before the first plan).
	Revision int       `json:"revision"`
	StepID   int       `json:"step_id,omitempty"`
	Kind     EventKind `json:"kind"`
	// Time is when the event happened; zero (absent) when the executor
	// has no clock (Config.Now returns the zero time).
	Time time.Time `json:"time,omitzero"`

	// session.start (and every event on the bus: Config.Bus)
	SessionID string  `json:"session_id,omitempty"`
	Goal      string  `json:"goal,omitempty"`
	Limits    *Limits `json:"limits,omitempty"`

	// plan.diff and plan.rejected: the steps as the planner gave them
	// (plan.diff: canonical arguments). plan.*: Cause, the error that made
	// the executor ask (nil on the first call).
	Steps   []Step `json:"steps,omitempty"`
	Removed []int  `json:"removed,omitzero"`
	Added   []int  `json:"added,omitzero"`
	Revised []int  `json:"revised,omitzero"`
	Cause   *Error `json:"cause,omitempty"`

	// step.*: the tool, and (but for step.retry) the expected outcome;
	// step.started and step.reused: the resolved arguments; step.started:
	// the idempotency key.
	ToolName        string          `json:"tool_name,omitempty"`
	Args            json.RawMessage `json:"args,omitempty"`
	ExpectedOutcome string          `json:"expected_outcome,omitempty"`
	Key             string          `json:"key,omitempty"`
	// step.succeeded and step.reused
	Result json.RawMessage `json:"result,omitempty"`
	// step.reused: the step whose result was reused.
	ReusedFrom int `json:"reused_from,omitempty"`
	// step.retry: the attempt that failed and the wait before the next.
	Attempt int     `json:"attempt,omitempty"`
	DelayMS float64 `json:"delay_ms,omitempty"`
	// step.failed: the failure ends the session rather than replanning.
	Fatal bool `json:"fatal,omitempty"`
	// step.failed: the way forward taken, when it is abort or skip
	// (absent: replan, or fatal). session.start: the session's default,
	// when one was set.
	OnFailure OnFailure `json:"on_failure,omitempty"`
	// step.failed, step.skipped, step.retry, plan.rejected, plan.error
	// and session.end.
	Error *Error `json:"error,omitempty"`

	// session.end
	Status  Status `json:"status,omitempty"`
	Reason  Reason `json:"reason,omitempty"`
	Message string `json:"message,omitempty"`
}

// WriteJSONL writes e as one line of JSON, without HTML escaping, so that
// reading it back (ReadJSONL) gives an equal Event.
func WriteJSONL(w io.Writer, e Event) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return enc.Encode(e)
}

// ReadJSONL reads an event log written by WriteJSONL. Blank lines are
// skipped.
func ReadJSONL(r io.Reader) ([]Event, error) {
	dec := json.NewDecoder(r)
	var out []Event
	for {
		var e Event
		err := dec.Decode(&e)
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		out = append(out, e)
	}
}

// sameJSON reports whether two canonical documents are equal.
func sameJSON(a, b json.RawMessage) bool { return bytes.Equal(a, b) }
