package dispatcher

import (
	"context"
	"time"

	"github.com/toolhost/toolhost/breaker"
)

// Event types the dispatcher publishes.
const (
	EventAttempt = "dispatch.attempt"
	EventRetry   = "dispatch.retry"
	EventResult  = "dispatch.result"
	EventBreaker = "breaker.state"
	// EventBreakerRemoved: a tool went away (ToolsChanged), and its
	// breaker with it.
	EventBreakerRemoved = "breaker.removed"
)

// AttemptEvent is published as each attempt starts.
type AttemptEvent struct {
	Tool     string    `json:"tool"`
	Key      string    `json:"key,omitempty"`
	Attempt  int       `json:"attempt"`
	Deadline time.Time `json:"deadline"`
	// TraceID is the call's trace (its OpenTelemetry trace id, hex), when
	// it has one.
	TraceID string `json:"trace_id,omitempty"`
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
	Tool string `json:"tool"`
	Key  string `json:"key,omitempty"`
	OK   bool   `json:"ok"`
	Kind Kind   `json:"kind,omitempty"`
	// InputRequired marks a call whose tool asked the user for input
	// (OK, since asking is not failing; the result comes with the call
	// that answers).
	InputRequired bool    `json:"input_required,omitempty"`
	Attempts      int     `json:"attempts"`
	DurationMS    float64 `json:"duration_ms"`
	// Shared marks a result replayed from, or waited for on, another
	// call's execution: its attempts are that execution's, not new ones.
	Shared bool `json:"shared,omitempty"`
	// Cancelled marks a dispatch whose caller cancelled it (for a keyed
	// execution: whose every waiter did): Kind is what the stopped
	// attempt ended with, and nobody received it.
	Cancelled bool `json:"cancelled,omitempty"`
	// TraceID is the call's trace, when it has one (not on refusals
	// before any execution).
	TraceID string `json:"trace_id,omitempty"`
}

// BreakerEvent is published on every breaker transition.
type BreakerEvent struct {
	Tool string `json:"tool"`
	From string `json:"from"`
	To   string `json:"to"`
}

// BreakerRemovedEvent is published when a tool's breaker is dropped
// because the tool is no longer served.
type BreakerRemovedEvent struct {
	Tool string `json:"tool"`
}

func (x *dispatch) emitAttempt(n int, actx context.Context) {
	if !x.d.events.Enabled() {
		return
	}
	deadline, _ := actx.Deadline()
	x.d.events.PublishFor(x.c.Caller, EventAttempt, AttemptEvent{Tool: x.tool.Name, Key: x.c.IdempotencyKey, Attempt: n, Deadline: deadline,
		TraceID: traceID(actx)})
}

func (x *dispatch) emitRetry(n int, delay time.Duration, derr *DispatchError) {
	if x.c.OnRetry == nil && !x.d.events.Enabled() {
		return
	}
	e := RetryEvent{Tool: x.tool.Name, Key: x.c.IdempotencyKey, Attempt: n,
		DelayMS: ms(delay), Reason: derr.Kind, Message: derr.Message}
	if x.c.OnRetry != nil {
		x.c.OnRetry(e)
	}
	x.d.events.PublishFor(x.c.Caller, EventRetry, e)
}

// finishOK and finish publish the execution's result event; finish returns
// its error for a one-line return.
func (x *dispatch) finishOK(ctx context.Context, attempts int) {
	if x.d.events.Enabled() {
		x.d.events.PublishFor(x.c.Caller, EventResult, ResultEvent{Tool: x.tool.Name, Key: x.c.IdempotencyKey, OK: true,
			InputRequired: x.input != nil, Attempts: attempts, DurationMS: ms(time.Since(x.start)), TraceID: traceID(ctx)})
	}
}

func (x *dispatch) finish(ctx context.Context, derr *DispatchError) *DispatchError {
	if x.d.events.Enabled() {
		x.d.events.PublishFor(x.c.Caller, EventResult, ResultEvent{Tool: x.tool.Name, Key: x.c.IdempotencyKey, Kind: derr.Kind,
			Attempts: derr.Attempts, DurationMS: ms(time.Since(x.start)), Cancelled: cancelled(ctx), TraceID: traceID(ctx)})
	}
	return derr
}

// emitShared publishes the result of a keyed call that waited for, or
// replayed, another call's execution.
func (x *dispatch) emitShared(ctx context.Context, o Outcome) {
	if !x.d.events.Enabled() {
		return
	}
	e := ResultEvent{Tool: x.tool.Name, Key: x.c.IdempotencyKey, OK: o.Err == nil, InputRequired: o.Input != nil, Attempts: o.Attempts, Shared: true,
		Cancelled: o.Err != nil && cancelled(ctx), TraceID: traceID(ctx)}
	if o.Err != nil {
		e.Kind = o.Err.Kind
	}
	x.d.events.PublishFor(x.c.Caller, EventResult, e)
}

func (d *Dispatcher) breakerChanged(tool string, from, to breaker.State) {
	d.events.Publish(EventBreaker, BreakerEvent{Tool: tool, From: from.String(), To: to.String()})
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
