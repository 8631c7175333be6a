package governor

import (
	"errors"
	"fmt"
	"time"
)

// Sentinels for errors.Is. Every error the Governor returns wraps one of
// them, or the context's error.
var (
	// ErrRateLimited: the quota cannot grant the draw before the caller's
	// deadline (or within Config.MaxWait); a *LimitError says when it
	// could.
	ErrRateLimited = errors.New("rate limited")
	// ErrInvalid: the request itself is wrong: an unknown quota or
	// priority, a cost below 1 or above the quota's burst.
	ErrInvalid = errors.New("invalid governor request")
)

// LimitError is a draw the quota refused: it wraps ErrRateLimited. Match it
// with errors.As to read RetryAfter.
type LimitError struct {
	// Quota is the quota's name.
	Quota string
	// Reason says why, in words a model or an operator can act on.
	Reason string
	// RetryAfter estimates when the draw could be granted; 0 means no
	// estimate.
	RetryAfter time.Duration
}

func (e *LimitError) Error() string {
	return fmt.Sprintf("quota %s: %s", e.Quota, e.Reason)
}

// Unwrap returns ErrRateLimited.
func (e *LimitError) Unwrap() error { return ErrRateLimited }

// RetryAfterDuration returns RetryAfter; callers that must not import this
// package (host's egress) read it through an interface.
func (e *LimitError) RetryAfterDuration() time.Duration { return e.RetryAfter }
