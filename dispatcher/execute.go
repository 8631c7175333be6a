package dispatcher

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/toolhost/toolhost/abi"
	"github.com/toolhost/toolhost/breaker"
	"github.com/toolhost/toolhost/internal/attempt"
	"github.com/toolhost/toolhost/registry"
)

// execute is the retry loop: at most MaxAttempts attempts, each admitted by
// the breaker, drawn from the governor's quotas and charged to the budget;
// a retry only for a retryable error, when the budget, the caller's
// deadline and the breaker all allow it.
func (x *dispatch) execute(ctx context.Context) Outcome {
	d, c := x.d, x.c
	x.start = time.Now()
	x.breaker = d.breakers.For(x.tool.Name)
	for n := 1; ; n++ {
		if n > 1 {
			// A hot reload may have replaced the tool while this call
			// waited to retry: retry on the version now serving (the old
			// module closes once its calls in flight return).
			cur, ok := d.tools.Lookup(x.tool.Name)
			if !ok {
				return failed(x.finish(ctx, newError(KindNotFound, n-1, nil,
					"tool %s was removed while its call waited to retry", x.tool.Name)))
			}
			x.tool = cur
		}
		ticket, ok := x.breaker.Allow()
		if !ok {
			return failed(x.finish(ctx, circuitOpen(x.tool.Name, n-1, x.breaker)))
		}
		// The quota is drawn before the slot is taken: a call waiting
		// for its upstream's tokens must not hold a slot other tools'
		// calls could use.
		sctx, span := d.attemptSpan(ctx, x.tool, n)
		actx, derr := x.govern(sctx, n-1)
		if derr != nil {
			x.breaker.Record(ticket, breaker.Ignore)
			endSpan(span, derr)
			return failed(x.finish(ctx, derr))
		}
		slot, derr := d.limits.acquire(actx, x.tool.Name, n-1)
		var res json.RawMessage
		if derr == nil {
			res, derr = x.attempt(actx, n)
		}
		bo := breakerOutcome(ctx, derr, c.Timeout > 0 && c.Timeout < x.tool.Timeout)
		if x.input != nil {
			bo = breaker.Ignore // asking says nothing of the tool's health
		}
		x.breaker.Record(ticket, bo)
		// Decide and publish while still holding the slot, so that in the
		// event stream every attempt's end (its retry or result event)
		// comes before the attempt that takes its slot.
		delay, final := x.decide(ctx, n, derr)
		endAttempt(span, derr, delay)
		if slot != nil {
			d.limits.release(slot)
		}
		if derr == nil {
			return Outcome{Result: res, Input: x.input, Attempts: n}
		}
		if final != nil {
			return failed(final)
		}
		if !sleep(ctx, delay) {
			return failed(x.finish(ctx, derr))
		}
	}
}

// decide settles attempt n: on success it publishes the result; on failure
// it returns the final envelope (published), or the delay before the next
// attempt (the retry published).
func (x *dispatch) decide(ctx context.Context, n int, derr *DispatchError) (time.Duration, *DispatchError) {
	d, c := x.d, x.c
	if derr == nil {
		x.finishOK(ctx, n)
		return 0, nil
	}
	if n >= d.retry.MaxAttempts || !retryable(derr, x.tool.Idempotent) || ctx.Err() != nil {
		return 0, x.finish(ctx, derr)
	}
	if c.Budget != nil && n >= *c.Budget {
		return 0, x.finish(ctx, newError(KindBudgetExceeded, n, derr,
			"budget of %d attempts spent; last attempt: %s: %s", *c.Budget, derr.Kind, derr.Message))
	}
	delay := d.retry.delay(n, time.Duration(derr.RetryAfterMS)*time.Millisecond, d.rand())
	if !covers(ctx, delay) {
		return 0, x.finish(ctx, derr)
	}
	if x.breaker.State() == breaker.Open {
		return 0, x.finish(ctx, circuitOpen(x.tool.Name, n, x.breaker))
	}
	x.emitRetry(n, delay, derr)
	return delay, nil
}

// attempt runs the tool once under the per-attempt timeout, which starts
// once the host is ready to run it (the caller already holds a
// concurrency slot, and the handler has prepared: see prepare), not when
// the call arrived.
func (x *dispatch) attempt(ctx context.Context, n int) (json.RawMessage, *DispatchError) {
	ctx, done, derr := x.prepare(ctx, n)
	if derr != nil {
		return nil, derr
	}
	defer done()
	timeout := x.timeout()
	actx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	actx, stats := attempt.With(actx)
	x.emitAttempt(n, actx)
	res, err := handle(actx, x.tool.Handler, x.c)
	x.input = inputRequest(err)
	if x.input != nil {
		return nil, nil
	}
	if err != nil {
		derr := classify(x.tool, err, n, actx, ctx, timeout)
		if derr.Kind == KindTimeout && ctx.Err() == nil {
			derr.starved = hostStarved(stats, timeout)
			x.noteCap(derr, timeout)
		}
		return nil, derr
	}
	return res, nil
}

// prepare lets a registry.Preparer wait for what its call needs before
// the guest can run (a compile on demand, an admission slot) under the
// caller's context rather than the attempt's timeout: a first call after a
// lazy start may wait seconds for its module's code, which says nothing
// of a tool whose timeout is 200 ms. A wait the caller's deadline ends is
// that deadline's timeout, with no attempt made and never held against
// the tool's breaker; anything else that fails (a compile) is the
// attempt's error, as it would have been inside the call.
func (x *dispatch) prepare(ctx context.Context, n int) (context.Context, func(), *DispatchError) {
	p, ok := x.tool.Handler.(registry.Preparer)
	if !ok {
		return ctx, func() {}, nil
	}
	pctx, done, err := p.Prepare(ctx, registry.Request{Args: x.c.Args, Caller: x.c.Caller})
	if err == nil {
		return pctx, done, nil
	}
	if ctx.Err() != nil {
		derr := classifyWait(x.tool.Name, ctx, n-1)
		derr.starved = true
		return nil, nil, derr
	}
	x.emitAttempt(n, ctx)
	return nil, nil, classify(x.tool, err, n, ctx, ctx, x.timeout())
}

// handle runs the handler, handing a RequestHandler the caller's identity
// with the arguments.
func handle(ctx context.Context, h registry.Handler, c Call) (json.RawMessage, error) {
	if rh, ok := h.(registry.RequestHandler); ok {
		return rh.HandleRequest(ctx, registry.Request{Args: c.Args, Caller: c.Caller})
	}
	return h.Handle(ctx, c.Args)
}

// hostStarved says whether an attempt that timed out spent its time in
// the host rather than in the guest: a module ran, and its guest code had
// less than half the timeout (the rest went to waiting for CPU or to
// instantiating under load). Such a timeout is not the tool's failure.
// With a handler that is not a module nothing is known, and the timeout
// counts.
func hostStarved(s *attempt.Stats, timeout time.Duration) bool {
	guest, ran := s.Guest()
	return ran && guest < timeout/2
}

// timeout is an attempt's timeout: the tool's own, shortened by the
// caller's, which may lengthen it only as far as the operator's
// MaxTimeout for the tool allows.
func (x *dispatch) timeout() time.Duration {
	if x.c.Timeout <= 0 {
		return x.tool.Timeout
	}
	return min(x.c.Timeout, max(x.tool.Timeout, x.d.maxTimeout[x.tool.Name]))
}

// noteCap tells a caller whose toolhost/timeout_ms was longer than the
// tool allows that its attempt ran under a shorter timeout, and which
// setting decided it: without this the message names only the cap, and a
// caller who asked for 10 s reads "did not finish within 2s" as a bug.
func (x *dispatch) noteCap(derr *DispatchError, timeout time.Duration) {
	if x.c.Timeout <= timeout {
		return
	}
	c := &TimeoutCap{RequestedMS: x.c.Timeout.Milliseconds(), TimeoutMS: timeout.Milliseconds(), By: CapToolTimeout}
	setting := fmt.Sprintf("the tool's timeout (its manifest's timeout_ms or [tools.%q] timeout; max_timeout there lets callers ask for more)", x.tool.Name)
	if x.d.maxTimeout[x.tool.Name] > x.tool.Timeout {
		c.By = CapMaxTimeout
		setting = fmt.Sprintf("[tools.%q] max_timeout", x.tool.Name)
	}
	derr.TimeoutCapped = c
	derr.Message += fmt.Sprintf("; the caller's timeout_ms %d was capped at %d by %s", c.RequestedMS, c.TimeoutMS, setting)
}

// breakerOutcome: only the tool's own failures count against it; bad input,
// a timeout the caller made shorter than the tool's own (else any client
// could open a healthy tool's breaker for everyone with timeout_ms: 1),
// spent budgets and callers that went away say nothing about its health.
func breakerOutcome(ctx context.Context, derr *DispatchError, callerShortened bool) breaker.Outcome {
	if derr == nil {
		return breaker.Success
	}
	if ctx.Err() != nil || derr.cause == errQueueWait || derr.starved || (derr.Kind == KindTimeout && callerShortened) {
		return breaker.Ignore
	}
	// The host refused one of the call's egress requests (not granted,
	// malformed, over quota): the caller's or the operator's doing. A
	// client asking a granted tool for URLs it may not fetch must not be
	// able to open its breaker for everyone.
	var refused egressRefused
	if errors.As(derr, &refused) {
		return breaker.Ignore
	}
	// An upstream failed one of the call's requests (a broken connection,
	// a 5xx answer): the destination is the caller's choice as often as
	// not, so its failure is not the tool's. Counted against the tool, a
	// few calls to a server that breaks off TLS handshakes opened a
	// fetching tool's breaker for every caller (issue 20). The governor
	// already accounts 429s and 503s per destination.
	var upstream egressUpstream
	if errors.As(derr, &upstream) {
		return breaker.Ignore
	}
	switch derr.Kind {
	case KindTimeout, KindTransient, KindInternal:
		return breaker.Failure
	}
	return breaker.Ignore
}

// egressRefused is an error the host returns for a call during which it
// refused one of the tool's egress requests (*toolhostv1.EgressRefusedError).
type egressRefused interface {
	EgressRefusal() *abi.EgressError
}

// egressUpstream is an error the host returns for a call during which an
// upstream failed one of the tool's egress requests
// (*toolhostv1.UpstreamFailedError).
type egressUpstream interface {
	EgressDestination() string
}
