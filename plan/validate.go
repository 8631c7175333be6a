package plan

import (
	"encoding/json"
	"slices"

	"github.com/toolhost/toolhost/abi"
)

// known is what a new plan is checked against: the steps that already ran
// (by id), the ids of the previous revision that had not run, and the
// smallest id never issued.
type known struct {
	history map[int]*Step
	pending map[int]bool
	nextID  int
}

// validate checks a plan before anything in it runs and returns it with
// arguments in canonical form (absent or null args become {}). It rejects,
// as invalid_plan:
//   - ids that are not positive, not increasing, or already used: an id
//     must belong to a step of the previous revision that has not run (the
//     step is kept or revised) or be at least k.nextID;
//   - tool names that break the ABI's naming rule;
//   - args that are not a JSON object;
//   - output fields (result, error, reused_from, revision) set by a planner;
//   - an on_failure that is not abort, skip or replan;
//   - references and depends_on entries naming a missing step, the step
//     itself or a later one, or a step that failed; a reference into a
//     step that already ran must also resolve in its result.
//
// k may be nil: no history.
func validate(steps []Step, k *known) ([]Step, *Error) {
	if k == nil {
		k = &known{nextID: 1}
	}
	if len(steps) > MaxPlanSteps {
		return nil, invalidf(0, "the plan has %d steps, more than the %d allowed", len(steps), MaxPlanSteps)
	}
	for i, s := range steps {
		if err := checkID(s.ID, i, steps, k); err != nil {
			return nil, err
		}
	}
	out := make([]Step, len(steps))
	ids := make(map[int]bool, len(steps))
	for _, s := range steps {
		ids[s.ID] = true
	}
	for i, s := range steps {
		if !abi.ValidToolName(s.ToolName) {
			return nil, invalidf(s.ID, "tool_name %q is not a tool name (^[A-Za-z0-9_.-]{1,128}$)", s.ToolName)
		}
		if s.Result != nil || s.Error != nil || s.ReusedFrom != 0 || s.Revision != 0 {
			return nil, invalidf(s.ID, "result, error, reused_from and revision are set by the executor, not in a plan")
		}
		if err := checkOnFailure(s.ID, "on_failure", s.OnFailure); err != nil {
			return nil, err
		}
		args, err := checkArgs(s, ids, k)
		if err != nil {
			return nil, err
		}
		for _, d := range s.DependsOn {
			if err := checkTarget(s.ID, d, "depends_on", ids, k); err != nil {
				return nil, err
			}
		}
		out[i] = s
		out[i].Args = args
		out[i].DependsOn = nil
		if len(s.DependsOn) > 0 {
			out[i].DependsOn = slices.Clone(s.DependsOn)
		}
	}
	return out, nil
}

func checkID(id, i int, steps []Step, k *known) *Error {
	switch {
	case id < 1 || id > MaxStepID:
		return invalidf(0, "steps[%d]: id %d is not between 1 and %d", i, id, MaxStepID)
	case i > 0 && id <= steps[i-1].ID:
		return invalidf(id, "ids must increase within a plan: %d follows %d", id, steps[i-1].ID)
	case k.history[id] != nil:
		return invalidf(id, "id %d belongs to a step that already ran; a new step needs an id of at least %d", id, k.nextID)
	case id < k.nextID && !k.pending[id]:
		return invalidf(id, "id %d was issued before to a step that is no longer planned; a new step needs an id of at least %d", id, k.nextID)
	}
	return nil
}

// checkArgs decodes the arguments, checks their references, and returns
// them canonical.
func checkArgs(s Step, ids map[int]bool, k *known) (json.RawMessage, *Error) {
	if len(s.Args) == 0 {
		return json.RawMessage("{}"), nil
	}
	v, err := decodeJSON(s.Args)
	if err != nil {
		return nil, invalidf(s.ID, "args: %v", err)
	}
	if v == nil {
		return json.RawMessage("{}"), nil
	}
	if _, ok := v.(map[string]any); !ok {
		return nil, invalidf(s.ID, "args must be a JSON object, got a %s", typeName(v))
	}
	_, err = walk(v, nil, func(path []string, r ref) (any, error) {
		if err := checkTarget(s.ID, r.step, "args"+pointer(path), ids, k); err != nil {
			return nil, err
		}
		if h := k.history[r.step]; h != nil {
			doc, err := decodeJSON(h.Result)
			if err != nil {
				return nil, invalidf(s.ID, "args%s: $ref %s: step %d's result is not JSON", pointer(path), r.text, r.step)
			}
			if _, err := r.lookup(doc); err != nil {
				return nil, invalidf(s.ID, "args%s: %v", pointer(path), err)
			}
		}
		return map[string]any{refKey: r.text}, nil // keep the reference
	})
	if err != nil {
		if e, ok := err.(*Error); ok {
			return nil, e
		}
		return nil, invalidf(s.ID, "%v", err)
	}
	return encodeJSON(v), nil
}

// checkTarget checks one dependency of step id on step target; ids are the
// plan's step ids.
func checkTarget(id, target int, where string, ids map[int]bool, k *known) *Error {
	if h := k.history[target]; h != nil {
		if h.Error != nil {
			return invalidf(id, "%s refers to step %d, which failed (%s)", where, target, h.Error.Kind)
		}
		return nil
	}
	switch {
	case target == id:
		return invalidf(id, "%s refers to the step itself", where)
	case ids[target] && target < id:
		return nil
	case ids[target]:
		return invalidf(id, "%s refers to step %d, which comes later; a step can use only earlier results", where, target)
	}
	return invalidf(id, "%s refers to step %d, which is neither an earlier step of this plan nor a step that ran", where, target)
}
