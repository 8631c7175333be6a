package dispatcher

import (
	"context"
	"time"

	"github.com/toolhost/toolhost/breaker"
	"github.com/toolhost/toolhost/registry"
)

// Event types the dispatcher publishes.
const (
	EventAttempt = "dispatch.attempt"
	EventRetry   = "dispatch.retry"
	EventResult  = "dispatch.result"
	EventBreaker = "breaker.state"
)

// AttemptEvent is published as each attempt starts.
type AttemptEvent struct {
	Tool     string    `json:"tool"`
	Key      string    `json:"key,omitempty"`
	Attempt  int       `json:"attempt"`
	Deadline time.Time `json:"deadline"`
}

// RetryEvent is published before waiting to retry: the attempt that failed,
// the wait, and why.
type RetryEvent struct {
	Tool    string  `json:"tool"`
	Key     string  `json:"key,omitempty"`
	Attempt int     `json:"attempt"`
	DelayMS float64 `json:"delay_ms"`
	Reason  Kind    `json:"reason"`
	Message string  `json:"message"`
}

// ResultEvent is published once per dispatch: when its execution ends,
// when it is refused before one, or (Shared) when it took the outcome of
// another call's execution with the same idempotency key.
type ResultEvent struct {
	Tool       string  `json:"tool"`
	Key        string  `json:"key,omitempty"`
	OK         bool    `json:"ok"`
	Kind       Kind    `json:"kind,omitempty"`
	Attempts   int     `json:"attempts"`
	DurationMS float64 `json:"duration_ms"`
	// Shared marks a result replayed from, or waited for on, another
	// call's execution: its attempts are that execution's, not new ones.
	Shared bool `json:"shared,omitempty"`
	// Cancelled marks a dispatch whose caller cancelled it (for a keyed
	// execution: whose every waiter did): Kind is what the stopped
	// attempt ended with, and nobody received it.
	Cancelled bool `json:"cancelled,omitempty"`
}

// BreakerEvent is published on every breaker transition.
type BreakerEvent struct {
	Tool string `json:"tool"`
	From string `json:"from"`
	To   string `json:"to"`
}

func (d *Dispatcher) emitAttempt(tool *registry.Tool, c Call, n int, actx context.Context) {
	if !d.events.Enabled() {
		return
	}
	deadline, _ := actx.Deadline()
	d.events.PublishFor(c.Caller, EventAttempt, AttemptEvent{Tool: tool.Name, Key: c.IdempotencyKey, Attempt: n, Deadline: deadline})
}

func (d *Dispatcher) emitRetry(tool *registry.Tool, c Call, n int, delay time.Duration, derr *DispatchError) {
	if c.OnRetry == nil && !d.events.Enabled() {
		return
	}
	e := RetryEvent{Tool: tool.Name, Key: c.IdempotencyKey, Attempt: n,
		DelayMS: ms(delay), Reason: derr.Kind, Message: derr.Message}
	if c.OnRetry != nil {
		c.OnRetry(e)
	}
	d.events.PublishFor(c.Caller, EventRetry, e)
}

// finishOK and finish publish the execution's result event; finish returns
// its error for a one-line return.
func (d *Dispatcher) finishOK(tool *registry.Tool, c Call, start time.Time, attempts int) {
	if d.events.Enabled() {
		d.events.PublishFor(c.Caller, EventResult, ResultEvent{Tool: tool.Name, Key: c.IdempotencyKey, OK: true,
			Attempts: attempts, DurationMS: ms(time.Since(start))})
	}
}

func (d *Dispatcher) finish(ctx context.Context, tool *registry.Tool, c Call, start time.Time, derr *DispatchError) *DispatchError {
	if d.events.Enabled() {
		d.events.PublishFor(c.Caller, EventResult, ResultEvent{Tool: tool.Name, Key: c.IdempotencyKey, Kind: derr.Kind,
			Attempts: derr.Attempts, DurationMS: ms(time.Since(start)), Cancelled: cancelled(ctx)})
	}
	return derr
}

func (d *Dispatcher) emitShared(ctx context.Context, tool *registry.Tool, c Call, o Outcome) {
	if !d.events.Enabled() {
		return
	}
	e := ResultEvent{Tool: tool.Name, Key: c.IdempotencyKey, OK: o.Err == nil, Attempts: o.Attempts, Shared: true,
		Cancelled: o.Err != nil && cancelled(ctx)}
	if o.Err != nil {
		e.Kind = o.Err.Kind
	}
	d.events.PublishFor(c.Caller, EventResult, e)
}

func (d *Dispatcher) breakerChanged(tool string, from, to breaker.State) {
	d.events.Publish(EventBreaker, BreakerEvent{Tool: tool, From: from.String(), To: to.String()})
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
