// Package idempotency deduplicates executions by key. Calls that present
// the same key share one execution: the first claims the key and runs, the
// rest wait for its outcome, and a completed outcome is replayed for a while
// afterwards.
//
// Store is the seam for sharing keys across replicas (a Redis store later);
// Memory is the embedded default.
package idempotency

import (
	"context"
	"errors"
	"fmt"
)

// Outcome is what an execution produced. Err is kept as the value the
// execution returned (the dispatcher stores its envelope).
type Outcome struct {
	Result   []byte
	Err      error
	Attempts int
}

// Claim is the answer to Acquire: either this caller runs the execution
// (Leader) and must call Complete exactly once, or it waits for someone
// else's outcome with Wait.
type Claim interface {
	// Leader reports whether the caller must run the execution.
	Leader() bool
	// Wait returns the outcome of the execution the key belongs to, or
	// ctx's error if ctx ends first. A leader may Wait too (from another
	// goroutine than the one that will Complete): it then waits like any
	// follower.
	Wait(ctx context.Context) (Outcome, error)
	// Complete publishes the leader's outcome to every waiter, and keeps it
	// for replay when keep is true; when keep is false the key is released
	// at once so the next call runs anew. Only a leader calls Complete.
	Complete(o Outcome, keep bool)
	// Release says the caller no longer waits for the outcome (its
	// context ended). Every claim on a running execution, the leader's
	// included, counts as one waiter from Acquire until its Release. When
	// the last waiter of an execution that has not completed releases, the
	// execution is abandoned: the key is freed at once (the next Acquire
	// leads a new execution) and the leader's Abandoned channel closes.
	// Release reports whether this call abandoned the execution. Calling
	// it again, or after Complete, has no effect and reports false.
	Release() bool
	// Abandoned is closed when the execution was abandoned (see Release):
	// the leader should stop it and Complete with keep=false, so that the
	// outcome of a stopped execution is never replayed. A follower's
	// channel is nil.
	Abandoned() <-chan struct{}
}

// Store maps keys to executions. Implementations must be safe for
// concurrent use and must make "finished" and "stored" one step: no caller
// may find the key free between an execution's end and its outcome being
// kept.
type Store interface {
	// Acquire claims key for an execution whose request has the given
	// fingerprint (a digest of tool and arguments). A key held by a
	// request with another fingerprint is an *ConflictError. A new key
	// the store has no room for (its bounds, per caller: CallerFrom(ctx))
	// is a *LimitError; the store never makes room by dropping an
	// outcome it keeps.
	Acquire(ctx context.Context, key, fingerprint string) (Claim, error)
}

// ConflictError is a key presented with a request other than the one it
// was first used for. The caller must use a new key (or the original
// request); it never gets the other request's outcome.
type ConflictError struct {
	Key string
}

func (e *ConflictError) Error() string {
	return fmt.Sprintf("idempotency key %q was already used for a different tool or different arguments; use a new key for a new request", e.Key)
}

// ErrConflict matches any *ConflictError with errors.Is.
var ErrConflict = errors.New("idempotency key conflict")

// Is makes errors.Is(err, ErrConflict) true.
func (e *ConflictError) Is(target error) bool { return target == ErrConflict }
