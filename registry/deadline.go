package registry

import (
	"context"
	"fmt"
	"runtime"
	"time"
)

// validators caps the validations running at once, those abandoned at a
// deadline included: jsonschema cannot be stopped mid-way, so a
// validation whose caller gave up runs on, and without the cap a client
// could pile them up.
var validators = make(chan struct{}, 4*runtime.GOMAXPROCS(0))

// DeadlineError is a validation that did not finish before its deadline:
// the arguments are too costly to check in the time the call has.
type DeadlineError struct {
	Tool string
	// Budget is the time validation was given.
	Budget time.Duration
	// Err is the context's error.
	Err error
}

func (e *DeadlineError) Error() string {
	return fmt.Sprintf("arguments for %s could not be checked against its input schema within %v: %v", e.Tool, e.Budget, e.Err)
}

// Unwrap returns the context's error.
func (e *DeadlineError) Unwrap() error { return e.Err }

// inlineArgs is the size under which arguments are validated on the
// caller's goroutine: the load-time bound keeps such a validation under
// MaxSchemaVisits × inlineArgs/2 subschema applications (a few
// milliseconds), not worth a goroutine, a timer and a slot per call.
const inlineArgs = 512

// ValidateContext is Validate under a deadline: the tool's own timeout,
// or ctx's deadline if that comes first. It returns a *DeadlineError when
// the validation (or the wait for one of the few validation slots) outlasts
// it; the validation itself then runs on in the background until it ends,
// holding its slot (the load-time bound, MaxSchemaVisits, keeps that
// finite). Arguments under 512 bytes are validated at once, inline.
func (t *Tool) ValidateContext(ctx context.Context, args []byte) error {
	if len(args) < inlineArgs {
		return t.Validate(args)
	}
	// Reading the arguments is linear in their size (the transport caps
	// it): only the schema's part needs the deadline.
	inst, err := t.readArgs(args)
	if err != nil {
		return err
	}
	budget := t.Timeout
	if budget <= 0 {
		budget = 30 * time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, budget)
	defer cancel()
	select {
	case validators <- struct{}{}:
	case <-ctx.Done():
		return &DeadlineError{Tool: t.Name, Budget: budget, Err: ctx.Err()}
	}
	done := make(chan error, 1)
	go func() {
		defer func() { <-validators }()
		done <- t.check(inst)
	}()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		return &DeadlineError{Tool: t.Name, Budget: budget, Err: ctx.Err()}
	}
}
