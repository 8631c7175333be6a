package dispatcher

import (
	"context"
	"time"
)

// RetryPolicy says how often and how long to wait before trying again. The
// zero value is the contract's policy: 3 attempts, 100 ms then 400 ms, each
// stretched by U[0, 0.5].
type RetryPolicy struct {
	// MaxAttempts caps attempts per call, the first included; 0 means 3.
	MaxAttempts int
	// Delays[i] is the base delay before attempt i+2; the last one repeats.
	// Empty means [100ms, 400ms].
	Delays []time.Duration
	// Jitter stretches each delay by U[0, Jitter]; 0 means 0.5, negative
	// means none.
	Jitter float64
	// MaxRetryAfter caps how far a guest's retry_after_ms can stretch a
	// delay; 0 means 10 s.
	MaxRetryAfter time.Duration
}

var defaultDelays = []time.Duration{100 * time.Millisecond, 400 * time.Millisecond}

func (p RetryPolicy) withDefaults() RetryPolicy {
	if p.MaxAttempts <= 0 {
		p.MaxAttempts = 3
	}
	if len(p.Delays) == 0 {
		p.Delays = defaultDelays
	}
	if p.Jitter == 0 {
		p.Jitter = 0.5
	}
	if p.Jitter < 0 {
		p.Jitter = 0
	}
	if p.MaxRetryAfter <= 0 {
		p.MaxRetryAfter = 10 * time.Second
	}
	return p
}

// delay is the wait after attempt n failed: the schedule's base for the
// next attempt times (1 + U[0, Jitter]), or the guest's retry_after if that
// is longer (capped at MaxRetryAfter). u is a U[0,1) draw.
func (p RetryPolicy) delay(n int, retryAfter time.Duration, u float64) time.Duration {
	base := p.Delays[min(n-1, len(p.Delays)-1)]
	d := time.Duration(float64(base) * (1 + u*p.Jitter))
	return max(d, min(retryAfter, p.MaxRetryAfter))
}

// retryable says whether a failed attempt may be tried again: transient
// errors always, timeouts only for a tool whose record says idempotent (a
// timed-out write may have committed), nothing else.
func retryable(e *DispatchError, idempotent bool) bool {
	switch e.Kind {
	case KindTransient:
		return true
	case KindTimeout:
		return idempotent && e.cause != errQueueWait
	}
	return false
}

// sleep waits d or until ctx ends, reporting whether the full wait passed.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// covers reports whether ctx's remaining time outlasts d: a retry that
// cannot start before the caller's deadline is not started.
func covers(ctx context.Context, d time.Duration) bool {
	deadline, ok := ctx.Deadline()
	return !ok || time.Until(deadline) > d
}
