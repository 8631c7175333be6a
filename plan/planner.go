package plan

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
)

// Input is what a planner sees: the goal, the history so far and the error
// that made the executor ask (nil on the first call), plus two
// conveniences: the steps of the current plan that have not run (so a
// planner can keep or revise them by id) and the smallest id a new step
// may take.
type Input struct {
	Goal      string `json:"goal"`
	History   []Step `json:"history"`
	LastError *Error `json:"last_error"`
	Pending   []Step `json:"pending"`
	NextID    int    `json:"next_id"`
}

// Planner makes plans. Plan must behave as a pure function of its input:
// the same input gives the same steps. It knows nothing of retries or
// timeouts (the executor bounds each call with Config.PlannerTimeout).
// Returning no steps means "no plan". Implementations must be safe for
// concurrent use when one Executor runs several sessions at once.
type Planner interface {
	Plan(ctx context.Context, in Input) ([]Step, error)
}

// PlannerFunc adapts a function to Planner.
type PlannerFunc func(ctx context.Context, in Input) ([]Step, error)

// Plan calls f.
func (f PlannerFunc) Plan(ctx context.Context, in Input) ([]Step, error) { return f(ctx, in) }

// Static is the planner of a plan file: the steps on the first call and
// nothing after, so any failure ends the session with no_plan.
func Static(steps []Step) Planner {
	steps = slices.Clone(steps)
	return PlannerFunc(func(_ context.Context, in Input) ([]Step, error) {
		if in.LastError != nil {
			return nil, nil
		}
		return slices.Clone(steps), nil
	})
}

// RawPlanner plans in JSON: it takes an Input document and returns
// {"steps": [...]} or {"error": {"message": "..."}}. host.Planner, a
// sandboxed WebAssembly planner, is one. It must be safe for concurrent
// use.
type RawPlanner interface {
	Plan(ctx context.Context, input []byte) ([]byte, error)
}

// JSON adapts a RawPlanner to Planner. Output that is not exactly one of
// the two documents (unknown fields, trailing data, both or neither
// member) is a planner error.
func JSON(p RawPlanner) Planner {
	return PlannerFunc(func(ctx context.Context, in Input) ([]Step, error) {
		if in.History == nil {
			in.History = []Step{}
		}
		if in.Pending == nil {
			in.Pending = []Step{}
		}
		b, err := json.Marshal(in)
		if err != nil {
			return nil, err
		}
		out, err := p.Plan(ctx, b)
		if err != nil {
			return nil, err
		}
		return parseOutput(out)
	})
}

type plannerOutput struct {
	Steps *[]Step `json:"steps"`
	Error *struct {
		Message string `json:"message"`
	} `json:"error"`
}

// parseOutput reads a planner's {"steps": [...]} or {"error": {...}}.
func parseOutput(b []byte) ([]Step, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var o plannerOutput
	if err := dec.Decode(&o); err != nil {
		return nil, fmt.Errorf(`planner output is not {"steps": [...]} or {"error": {"message": ...}}: %v`, err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("planner output: trailing data after the JSON object")
	}
	switch {
	case o.Steps != nil && o.Error != nil:
		return nil, fmt.Errorf(`planner output has both "steps" and "error"`)
	case o.Error != nil:
		return nil, fmt.Errorf("the planner reported: %s", o.Error.Message)
	case o.Steps == nil:
		return nil, fmt.Errorf(`planner output has neither "steps" nor "error"`)
	}
	return *o.Steps, nil
}
