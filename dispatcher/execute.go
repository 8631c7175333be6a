package dispatcher

import (
	"context"
	"encoding/json"
	"time"

	"github.com/toolhost/toolhost/breaker"
	"github.com/toolhost/toolhost/registry"
)

// execute is the retry loop: at most MaxAttempts attempts, each admitted by
// the breaker and charged to the budget; a retry only for a retryable
// error, when the budget, the caller's deadline and the breaker all allow
// it.
func (d *Dispatcher) execute(ctx context.Context, tool *registry.Tool, c Call) (json.RawMessage, *DispatchError) {
	start := time.Now()
	b := d.breakers.For(tool.Name)
	for n := 1; ; n++ {
		ticket, ok := b.Allow()
		if !ok {
			return nil, d.finish(tool, c, start, circuitOpen(tool.Name, n-1, b))
		}
		res, derr := d.attempt(ctx, tool, c, n)
		b.Record(ticket, breakerOutcome(ctx, derr))
		if derr == nil {
			d.finishOK(tool, c, start, n)
			return res, nil
		}
		if n >= d.retry.MaxAttempts || !retryable(derr, tool.Idempotent) || ctx.Err() != nil {
			return nil, d.finish(tool, c, start, derr)
		}
		if c.Budget != nil && n >= *c.Budget {
			return nil, d.finish(tool, c, start, newError(KindBudgetExceeded, n, derr,
				"budget of %d attempts spent; last attempt: %s: %s", *c.Budget, derr.Kind, derr.Message))
		}
		delay := d.retry.delay(n, time.Duration(derr.RetryAfterMS)*time.Millisecond, d.rand())
		if !covers(ctx, delay) {
			return nil, d.finish(tool, c, start, derr)
		}
		if b.State() == breaker.Open {
			return nil, d.finish(tool, c, start, circuitOpen(tool.Name, n, b))
		}
		d.emitRetry(tool, c, n, delay, derr)
		if !sleep(ctx, delay) {
			return nil, d.finish(tool, c, start, derr)
		}
	}
}

// attempt runs the tool once: a concurrency slot first, then the
// per-attempt timeout, which starts only once the slot is held.
func (d *Dispatcher) attempt(ctx context.Context, tool *registry.Tool, c Call, n int) (json.RawMessage, *DispatchError) {
	slot, derr := d.limits.acquire(ctx, tool.Name, n-1)
	if derr != nil {
		return nil, derr
	}
	defer d.limits.release(slot)
	timeout := tool.Timeout
	if c.Timeout > 0 {
		timeout = c.Timeout
	}
	actx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	d.emitAttempt(tool, c, n, actx)
	res, err := tool.Handler.Handle(actx, c.Args)
	if err != nil {
		return nil, classify(tool, err, n, actx, ctx, timeout)
	}
	return res, nil
}

// breakerOutcome: only the tool's own failures count against it; bad input,
// spent budgets and callers that went away say nothing about its health.
func breakerOutcome(ctx context.Context, derr *DispatchError) breaker.Outcome {
	if derr == nil {
		return breaker.Success
	}
	if ctx.Err() != nil || derr.cause == errQueueWait {
		return breaker.Ignore
	}
	switch derr.Kind {
	case KindTimeout, KindTransient, KindInternal:
		return breaker.Failure
	}
	return breaker.Ignore
}
