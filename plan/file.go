package plan

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"reflect"
	"strings"
)

// File is a plan file: a goal, the first plan, and optional budgets that
// command-line flags override. Its JSON Schema is FileSchema.
type File struct {
	// Goal says what the plan is for; planners read it.
	Goal string `json:"goal" jsonschema:"minLength=1"`
	// Steps is the first plan (what the static planner returns).
	Steps []Step `json:"steps,omitempty"`
	// MaxSteps, MaxReplans and MaxParallel are the session's budgets
	// (see Limits); absent means the default.
	MaxSteps    *int `json:"max_steps,omitempty" jsonschema:"minimum=1,maximum=10000"`
	MaxReplans  *int `json:"max_replans,omitempty" jsonschema:"minimum=0,maximum=1000"`
	MaxParallel *int `json:"max_parallel,omitempty" jsonschema:"minimum=1,maximum=64"`
	// SessionID names the session in idempotency keys; absent means a
	// fresh random id. Running a plan again under the same id within the
	// dispatcher's replay window replays the steps that already ran.
	SessionID string `json:"session_id,omitempty" jsonschema:"pattern=^[A-Za-z0-9_.-]{1\\,64}$"`
	// OnFailure is what the executor does when a step that says nothing
	// itself fails (Session.OnFailure); absent means replan.
	OnFailure OnFailure `json:"on_failure,omitempty"`
}

// Limits returns the file's budgets (zero fields for absent ones, which
// Limits reads as the defaults).
func (f *File) Limits() Limits {
	var l Limits
	if f.MaxSteps != nil {
		l.MaxSteps = *f.MaxSteps
	}
	if f.MaxReplans != nil {
		l.MaxReplans = *f.MaxReplans
		if l.MaxReplans == 0 {
			l.MaxReplans = -1
		}
	}
	if f.MaxParallel != nil {
		l.MaxParallel = *f.MaxParallel
	}
	return l
}

// ParseFile reads a plan file strictly: unknown or repeated fields (names
// match exactly, not case-insensitively as encoding/json would), trailing data,
// out-of-range budgets and a first plan the executor would reject as
// invalid_plan are errors. The error is an *Error of kind invalid_plan whose
// message names the offending field.
func ParseFile(b []byte) (*File, error) {
	if err := exactKeys(b); err != nil {
		return nil, invalidf(0, "plan file: %v", err)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var f File
	if err := dec.Decode(&f); err != nil {
		return nil, invalidf(0, "plan file: %v", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, invalidf(0, "plan file: trailing data after the JSON object")
	}
	if strings.TrimSpace(f.Goal) == "" {
		return nil, invalidf(0, "plan file: goal is required")
	}
	if err := checkRange("max_steps", f.MaxSteps, 1, MaxMaxSteps); err != nil {
		return nil, err
	}
	if err := checkRange("max_replans", f.MaxReplans, 0, MaxMaxReplans); err != nil {
		return nil, err
	}
	if err := checkRange("max_parallel", f.MaxParallel, 1, MaxMaxParallel); err != nil {
		return nil, err
	}
	if err := checkOnFailure(0, "plan file: on_failure", f.OnFailure); err != nil {
		return nil, err
	}
	if f.SessionID != "" && !ValidSessionID(f.SessionID) {
		return nil, invalidf(0, "plan file: session_id must match ^[A-Za-z0-9_.-]{1,64}$, got %q", f.SessionID)
	}
	steps, err := validate(f.Steps, nil)
	if err != nil {
		return nil, err
	}
	f.Steps = steps
	return &f, nil
}

func checkRange(name string, v *int, lo, hi int) error {
	if v != nil && (*v < lo || *v > hi) {
		return invalidf(0, "plan file: %s must be between %d and %d, got %d", name, lo, hi, *v)
	}
	return nil
}

// ValidSessionID reports whether id matches ^[A-Za-z0-9_.-]{1,64}$: no
// colon, so that an idempotency key splits back into its parts.
func ValidSessionID(id string) bool {
	if len(id) == 0 || len(id) > 64 {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '.' || c == '-') {
			return false
		}
	}
	return true
}

var (
	fileKeys = keySet(reflect.TypeFor[File]())
	stepKeys = keySet(reflect.TypeFor[Step]())
)

func keySet(t reflect.Type) map[string]bool {
	m := map[string]bool{}
	for f := range t.Fields() {
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		m[name] = true
	}
	return m
}

// exactKeys checks that the file object and each step object use only
// their fields' exact names, each once. Other errors are left to the
// decoder, which reports them better.
func exactKeys(b []byte) error {
	top, err := objectKeys(b, fileKeys, "")
	if err != nil || top["steps"] == nil {
		return err
	}
	var steps []json.RawMessage
	if json.Unmarshal(top["steps"], &steps) != nil {
		return nil
	}
	for i, s := range steps {
		if _, err := objectKeys(s, stepKeys, fmt.Sprintf("steps[%d].", i)); err != nil {
			return err
		}
	}
	return nil
}

// objectKeys reads a JSON object's members, refusing names not in allowed
// and names given twice; a document that is not an object gives no error
// and no members.
func objectKeys(b []byte, allowed map[string]bool, where string) (map[string]json.RawMessage, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, nil
	}
	members := map[string]json.RawMessage{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, nil
		}
		name, _ := tok.(string)
		switch {
		case !allowed[name]:
			return nil, fmt.Errorf("unknown field %s%q", where, name)
		case members[name] != nil:
			return nil, fmt.Errorf("field %s%q appears twice", where, name)
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, nil
		}
		members[name] = v
	}
	return members, nil
}
