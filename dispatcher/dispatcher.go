// Package dispatcher stands between callers and tools. It is the only layer
// that knows about timers, retries and idempotency. One call passes, in
// this order:
//
//	lookup → validate → budget → circuit breaker → idempotency → retry loop
//	  (each attempt: breaker admits → governor draw → concurrency slot → handler prepares (registry.Preparer) → per-attempt timeout → handler)
//
// The governor draws per attempt, after idempotency: a replay or a caller
// that joins a keyed execution spends no quota, and every attempt that
// goes to the tool spends its cost, retries included.
//
// and every failure comes out as one DispatchError envelope.
package dispatcher

import (
	"context"
	"encoding/json"
	"errors"
	"math/rand/v2"
	"time"

	"github.com/toolhost/toolhost/abi"
	"github.com/toolhost/toolhost/breaker"
	"github.com/toolhost/toolhost/events"
	"github.com/toolhost/toolhost/governor"
	"github.com/toolhost/toolhost/idempotency"
	"github.com/toolhost/toolhost/registry"
	"go.opentelemetry.io/otel/trace"
)

// Tools is what the dispatcher needs of a registry. Lookup must be safe for
// concurrent use.
type Tools interface {
	Lookup(name string) (*registry.Tool, bool)
}

// Options are a caller's dispatch options: the MCP tools/call _meta keys
// toolhost/idempotency_key, toolhost/timeout_ms, toolhost/budget and
// toolhost/priority. The zero value means "no key, the tool's timeout, no
// budget, default priority".
type Options struct {
	// IdempotencyKey dedupes calls: calls with one key share one
	// execution. Empty means no deduplication. The dispatcher never
	// invents keys.
	IdempotencyKey string
	// Caller scopes idempotency keys: an authenticated identity, never a
	// connection or session (a client that reconnects must get its
	// replay). Empty is the anonymous scope.
	Caller string
	// Timeout, when > 0, shortens the tool's per-attempt timeout. A
	// longer one is capped at the tool's timeout, or at its
	// ToolPolicy.MaxTimeout when the operator allows more: a caller must
	// not hold a slot longer than the operator meant to.
	Timeout time.Duration
	// Budget is how many attempts the caller can still afford; nil means
	// no budget (the retry policy still caps attempts).
	Budget *int
	// Priority is the governor priority class; empty means the tool's
	// default.
	Priority string
	// OnRetry, when set, is told of each retry of this call (the same
	// event dispatch.retry publishes), on the dispatching goroutine,
	// before the wait. It must not block. It lets a caller follow its own
	// call's retries without watching every call's events.
	OnRetry func(RetryEvent)
}

// Call is one request to run a tool.
type Call struct {
	Tool string
	Args json.RawMessage
	Options
}

// ToolPolicy overrides dispatch settings for one tool. Zero fields inherit
// the dispatcher's defaults.
type ToolPolicy struct {
	// Concurrency caps this tool's executions in flight.
	Concurrency int
	// Breaker overrides the breaker settings, field by field.
	Breaker breaker.Settings
	// MaxTimeout is the longest per-attempt timeout a caller's
	// Options.Timeout may ask for; 0 (or anything below the tool's own
	// timeout) means the tool's own timeout: callers can only shorten it.
	MaxTimeout time.Duration
}

// Config configures a Dispatcher. The zero value is usable: every field
// documents its default.
type Config struct {
	// Events receives dispatch.* events (about the call's Caller) and
	// breaker.state events (about the server); nil means none.
	Events *events.Bus
	// Retry is the retry policy; the zero value is the contract's.
	Retry RetryPolicy
	// Concurrency caps each tool's executions in flight; 0 means 8.
	Concurrency int
	// GlobalConcurrency caps all executions in flight; 0 means 64.
	GlobalConcurrency int
	// QueueTimeout bounds a wait for a free slot; 0 means 30 s. The
	// caller's deadline bounds it too.
	QueueTimeout time.Duration
	// Idempotency stores keys; nil means an in-memory store keeping
	// outcomes for IdempotencyTTL.
	Idempotency idempotency.Store
	// IdempotencyTTL is how long a completed outcome is replayed; 0 means
	// 60 s. Used only when Idempotency is nil.
	IdempotencyTTL time.Duration
	// IdempotencyLimits bound the in-memory store's keys and bytes, in
	// total and per caller (see idempotency.Limits for the defaults); a
	// key over a bound is refused as rate_limited. Used only when
	// Idempotency is nil.
	IdempotencyLimits idempotency.Limits
	// Breaker is the default breaker settings (see package breaker for
	// each field's default).
	Breaker breaker.Settings
	// BreakerShared carries breaker openings between replicas
	// (breaker/redisstore); nil keeps each breaker to this process.
	BreakerShared breaker.Shared
	// Tools holds per-tool overrides, by tool name.
	Tools map[string]ToolPolicy
	// Rand returns U[0,1) draws for jitter; nil means math/rand/v2.
	Rand func() float64
	// Governor admits each attempt against the shared quotas its tool
	// draws on (see Governor); nil means no governor.
	Governor Governor
	// TracerProvider makes the spans of each dispatch (see tracing.go);
	// nil means none, at no cost.
	TracerProvider trace.TracerProvider
}

// Dispatcher runs calls against a set of tools. It is safe for concurrent
// use.
type Dispatcher struct {
	tools    Tools
	events   *events.Bus
	retry    RetryPolicy
	limits   *limiter
	idem     idempotency.Store
	breakers *breaker.Set
	rand     func() float64
	governor Governor
	tracer   trace.Tracer // nil: tracing off
	// maxTimeout is ToolPolicy.MaxTimeout by tool name; read-only.
	maxTimeout map[string]time.Duration
}

// New returns a Dispatcher over tools.
func New(tools Tools, cfg Config) *Dispatcher {
	d := &Dispatcher{tools: tools, events: cfg.Events, retry: cfg.Retry.withDefaults(), idem: cfg.Idempotency, rand: cfg.Rand,
		governor: cfg.Governor, tracer: newTracer(cfg.TracerProvider)}
	if d.rand == nil {
		d.rand = rand.Float64
	}
	if d.idem == nil {
		d.idem = idempotency.NewMemoryWith(idempotency.MemoryOptions{TTL: cfg.IdempotencyTTL, Limits: cfg.IdempotencyLimits})
	}
	perTool := func(tool string) int {
		if n := cfg.Tools[tool].Concurrency; n > 0 {
			return n
		}
		return orDefault(cfg.Concurrency, 8)
	}
	d.limits = newLimiter(orDefault(cfg.GlobalConcurrency, 64), orDefault(cfg.QueueTimeout, 30*time.Second), perTool)
	overrides := make(map[string]breaker.Settings, len(cfg.Tools))
	d.maxTimeout = make(map[string]time.Duration)
	for name, p := range cfg.Tools {
		overrides[name] = p.Breaker
		if p.MaxTimeout > 0 {
			d.maxTimeout[name] = p.MaxTimeout
		}
	}
	d.breakers = breaker.NewSet(cfg.Breaker, overrides, breaker.SetOptions{Rand: d.rand, OnChange: d.breakerChanged, Shared: cfg.BreakerShared,
		Known: d.serves})
	return d
}

// serves reports whether name is a tool served now, by its manifest name
// (the only name breakers are kept under).
func (d *Dispatcher) serves(name string) bool {
	t, ok := d.tools.Lookup(name)
	return ok && t.Name == name
}

// ToolsChanged drops the breakers of tools no longer served and publishes
// a breaker.removed event for each, so that their metric series go too.
// Call it after every change of the tools (a reload that removed some).
func (d *Dispatcher) ToolsChanged() {
	for _, tool := range d.breakers.Prune() {
		d.events.Publish(EventBreakerRemoved, BreakerRemovedEvent{Tool: tool})
	}
}

// Breakers returns the state of every tool's circuit breaker, by tool
// name (a tool not called yet has none: it is closed).
func (d *Dispatcher) Breakers() []breaker.Status { return d.breakers.Statuses() }

func orDefault[T comparable](v, def T) T {
	var zero T
	if v == zero {
		return def
	}
	return v
}

// Outcome is everything one dispatch produced: the result, or the error
// envelope, and the attempts made (for a replayed key, those of the
// execution replayed).
type Outcome struct {
	Result   json.RawMessage
	Attempts int
	Err      *DispatchError
	// Input, when set instead of Result, is the tool asking the user for
	// input before it can finish (abi.InputRequest). It is neither a
	// failure nor retryable: the breaker does not count it, and an
	// idempotency key does not keep it, so the call that brings the
	// answers runs and its result is what the key replays.
	Input *abi.InputRequest
	// Cancelled says the caller's context was cancelled (not timed out)
	// before the call finished: nobody reads the outcome. Err is still
	// set (kind internal, or what the last attempt ended with): the
	// envelope's kinds are fixed, so cancellation is an outcome for
	// records and events, never a kind sent to clients.
	Cancelled bool
}

// Call runs c and returns the tool's result JSON, or a *DispatchError.
func (d *Dispatcher) Call(ctx context.Context, c Call) (json.RawMessage, error) {
	o := d.Do(ctx, c)
	if o.Err != nil {
		return nil, o.Err
	}
	if o.Input != nil {
		return nil, Unanswerable(c.Tool, o.Attempts)
	}
	return o.Result, nil
}

// Do runs c and returns its whole Outcome. When ctx is cancelled the
// guest is stopped at once (a keyed execution when its last waiter has
// gone) and the outcome is Cancelled.
func (d *Dispatcher) Do(ctx context.Context, c Call) Outcome {
	o := d.do(ctx, c)
	o.Cancelled = o.Err != nil && cancelled(ctx)
	return o
}

func (d *Dispatcher) do(ctx context.Context, c Call) Outcome {
	tool, ok := d.tools.Lookup(c.Tool)
	if !ok {
		return d.refused(c, newError(KindNotFound, 0, nil, "no tool named %q (toolhost list shows the tools this server has)", c.Tool))
	}
	// Taken before anything is published about the tool: a tool with
	// metric series has a breaker, so ToolsChanged removes both.
	b := d.breakers.For(tool.Name)
	if err := tool.ValidateContext(ctx, c.Args); err != nil {
		return d.refused(c, validationError(ctx, tool, err))
	}
	if c.Budget != nil && *c.Budget <= 0 {
		return d.refused(c, newError(KindBudgetExceeded, 0, nil, "budget is 0: no attempt of %s was made", c.Tool))
	}
	if b.State() == breaker.Open {
		return d.refused(c, circuitOpen(tool.Name, 0, b))
	}
	if d.governor != nil && c.Priority != "" {
		// Checked before idempotency, not at the draw: a key's stored
		// outcome must not be a refusal of one caller's option.
		if _, err := governor.ParsePriority(c.Priority); err != nil {
			return d.refused(c, newError(KindSchema, 0, err, "%s", err.Error()))
		}
	}
	x := &dispatch{d: d, c: c, tool: tool}
	if c.IdempotencyKey != "" {
		return x.keyedTraced(ctx)
	}
	return x.execute(ctx)
}

// Refused publishes the result of a call a caller turned away before Do
// (the transport's not_found for a name it does not serve), as Do does for
// its own refusals, so that metrics and followers of the stream see every
// call; it returns the Outcome.
func (d *Dispatcher) Refused(c Call, e *DispatchError) Outcome { return d.refused(c, e) }

// validationError is the envelope for arguments that failed validation, or
// whose validation outlasted the call's deadline or the tool's timeout
// (schema validation's cost grows with the arguments: it gets no more time
// than the tool itself).
func validationError(ctx context.Context, tool *registry.Tool, err error) *DispatchError {
	var de *registry.DeadlineError
	switch {
	case !errors.As(err, &de):
		return newError(KindSchema, 0, err, "%s", err.Error())
	case ctx.Err() != nil:
		return classifyWait(tool.Name, ctx, 0)
	}
	return newError(KindTimeout, 0, err, "%s", err.Error())
}

// refused publishes the result of a call that ended before any execution
// (so metrics and followers of the stream see every dispatch) and returns
// it.
func (d *Dispatcher) refused(c Call, e *DispatchError) Outcome {
	if d.events.Enabled() {
		d.events.PublishFor(c.Caller, EventResult, ResultEvent{Tool: c.Tool, Key: c.IdempotencyKey, Kind: e.Kind, Attempts: e.Attempts})
	}
	return failed(e)
}

func failed(e *DispatchError) Outcome { return Outcome{Attempts: e.Attempts, Err: e} }

func circuitOpen(tool string, attempts int, b *breaker.Breaker) *DispatchError {
	at := b.RetryAt()
	if at.IsZero() {
		return newError(KindCircuitOpen, attempts, nil,
			"tool %s has been failing; its circuit breaker is letting a few probe calls through and refuses others until they succeed", tool)
	}
	return newError(KindCircuitOpen, attempts, nil, "tool %s is failing and cooling down; its circuit breaker admits calls again after %s",
		tool, at.UTC().Format(time.RFC3339Nano))
}
