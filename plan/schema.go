package plan

import (
	"encoding/json"
	"reflect"

	"github.com/invopop/jsonschema"
)

// FileSchema returns the JSON Schema (2020-12) of a plan file, generated
// from File.
func FileSchema() json.RawMessage { return schemaOf(reflect.TypeFor[File](), "toolhost plan file") }

// ResultSchema returns the JSON Schema (2020-12) of a SessionResult,
// generated from SessionResult.
func ResultSchema() json.RawMessage {
	return schemaOf(reflect.TypeFor[SessionResult](), "toolhost plan session result")
}

// schemaOf reflects t and adds what struct tags cannot say: descriptions,
// enums, and the read-only output fields of a step.
func schemaOf(t reflect.Type, title string) json.RawMessage {
	var r jsonschema.Reflector
	s := r.ReflectFromType(t)
	s.Title = title
	annotate := func(def, prop, text string, enum ...any) {
		d, ok := s.Definitions[def]
		if !ok {
			return
		}
		if p, ok := d.Properties.Get(prop); ok {
			p.Description = text
			p.Enum = enum
		}
	}
	annotate("File", "goal", "what the plan is for; planners read it")
	annotate("File", "steps", "the first plan (what the static planner returns); ids increase")
	annotate("File", "session_id", "names the session in idempotency keys; absent means a fresh random id")
	annotate("File", "on_failure", "what the executor does when a step that sets none fails; absent means replan",
		OnFailureAbort, OnFailureSkip, OnFailureReplan)
	annotate("Step", "on_failure", "what the executor does when this step fails: abort the session, skip it (and the steps that depend on it) and run the rest, or replan; absent means the plan's",
		OnFailureAbort, OnFailureSkip, OnFailureReplan)
	annotate("Step", "args", `the arguments object; a value {"$ref": "/steps/N/result/..."} is replaced by that part of step N's result before dispatch`)
	annotate("Step", "depends_on", "earlier steps to wait for beyond those the references imply")
	annotate("Step", "expected_outcome", "what the step is for, in words")
	for _, out := range []string{"result", "error", "reused_from", "revision"} {
		annotate("Step", out, "set by the executor in the history; not allowed in a plan")
		if p, ok := s.Definitions["Step"].Properties.Get(out); ok {
			p.ReadOnly = true
		}
	}
	annotate("SessionResult", "status", "how the session ended", StatusCompleted, StatusFailed, StatusCancelled, StatusRunning)
	annotate("SessionResult", "reason", "why the session ended",
		ReasonGoalMet, ReasonStepBudget, ReasonReplanBudget, ReasonNoPlan, ReasonFatal, ReasonCancelled, ReasonAborted)
	annotate("Event", "kind", "what the event records", EventSessionStart, EventPlanDiff, EventPlanRejected,
		EventPlanEmpty, EventPlanError, EventStepStarted, EventStepRetry, EventStepSucceeded, EventStepFailed,
		EventStepReused, EventStepRefused, EventStepSkipped, EventSessionEnd)
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		panic("plan: schema: " + err.Error()) // reflected schemas always encode
	}
	return append(b, '\n')
}
