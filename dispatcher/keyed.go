package dispatcher

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"

	"github.com/toolhost/toolhost/idempotency"
)

// keyed runs a call that carries an idempotency key. The first caller with
// the key leads: the execution runs detached from its context (if it goes
// away, the others still get the outcome) but keeps its deadline.
// Everyone, the leader included, waits for the outcome with their own
// context. A caller whose context ends stops waiting; when it is the last
// waiter, the execution is stopped (see leave).
func (x *dispatch) keyed(ctx context.Context) Outcome {
	d, c := x.d, x.c
	fp, err := fingerprint(x.tool.Name, c.Args)
	if err != nil {
		return d.refused(c, newError(KindSchema, 0, err, "arguments are not valid JSON: %v", err))
	}
	claim, err := d.idem.Acquire(idempotency.WithCaller(ctx, c.Caller), scopedKey(c.Caller, c.IdempotencyKey), fp)
	if err != nil {
		if errors.Is(err, idempotency.ErrLimit) {
			return d.refused(c, storeFull(err))
		}
		if errors.Is(err, idempotency.ErrUnavailable) {
			return d.refused(c, storeUnavailable(err))
		}
		if errors.Is(err, idempotency.ErrConflict) {
			// The store saw the scoped key; the caller should see its own.
			return d.refused(c, newError(KindSchema, 0, err, "idempotency key %q was already used for a different tool or different arguments; use a new key for a new request", c.IdempotencyKey))
		}
		return d.refused(c, newError(KindInternal, 0, err, "idempotency store: %v", err))
	}
	d.markRole(ctx, claim.Leader())
	if claim.Leader() {
		// The execution gets its own copy of the dispatch: a hot reload
		// moves its tool on without changing what the waiters report.
		run := *x
		go run.lead(ctx, claim)
	}
	o, err := claim.Wait(ctx)
	if errors.Is(err, idempotency.ErrUnavailable) {
		// A shared store lost track of the execution (Redis away, or its
		// owner gone): fail closed, the caller may call again.
		claim.Release()
		out := failed(storeUnavailable(err))
		if !claim.Leader() {
			x.emitShared(ctx, out)
		}
		return out
	}
	if err != nil {
		return x.leave(ctx, claim)
	}
	out := Outcome{Result: o.Result, Attempts: o.Attempts}
	if ir := inputRequest(o.Err); ir != nil {
		out = Outcome{Input: ir, Attempts: o.Attempts}
	} else if o.Err != nil {
		out = failed(envelopeOf(o.Err))
	}
	if !claim.Leader() {
		x.emitShared(ctx, out)
	}
	return out
}

// leave ends the wait of a caller whose context ended. The last waiter
// to leave stops the execution and waits for it to stop (at once: every
// layer below honours the context), so that its record has the attempts
// actually made. A waiter that leaves while others stay made none of its
// own: the execution goes on for them, and their records count it.
func (x *dispatch) leave(ctx context.Context, claim idempotency.Claim) Outcome {
	attempts := 0
	if claim.Release() {
		o, _ := claim.Wait(context.WithoutCancel(ctx))
		attempts = o.Attempts
	}
	out := failed(classifyWait(x.tool.Name, ctx, attempts))
	if !claim.Leader() {
		x.emitShared(ctx, out)
	}
	return out
}

// lead runs the execution for everyone waiting on the key. It is stopped
// when its last waiter leaves; a stopped execution's outcome goes only to
// whoever still waits on it and is never kept for replay.
func (x *dispatch) lead(callerCtx context.Context, claim idempotency.Claim) {
	ctx, cancel := detach(callerCtx)
	defer cancel()
	// The store says when nobody waits any more; the execution then
	// stops as a cancelled call would.
	go func() {
		select {
		case <-claim.Abandoned():
			cancel()
		case <-ctx.Done():
		}
	}()
	o := x.execute(ctx)
	abandoned := false
	select {
	case <-claim.Abandoned():
		abandoned = true
	default:
	}
	if o.Err != nil {
		claim.Complete(idempotency.Outcome{Err: o.Err, Attempts: o.Attempts}, kept(o.Err.Kind) && !abandoned)
		return
	}
	if o.Input != nil {
		// The waiters get the request; the key stays free for the call
		// that brings the answers, whose result is the one kept.
		claim.Complete(idempotency.Outcome{Err: o.Input, Attempts: o.Attempts}, false)
		return
	}
	claim.Complete(idempotency.Outcome{Result: o.Result, Attempts: o.Attempts}, !abandoned)
}

// storeFull is the envelope for a key the store has no room for: the
// caller is told which bound and when room frees, and may call again then
// or without a key; it is never run without the deduplication it asked
// for.
func storeFull(err error) *DispatchError {
	e := newError(KindRateLimited, 0, err, "%v; call again later, or without an idempotency key", err)
	var lim *idempotency.LimitError
	if errors.As(err, &lim) && lim.RetryAfter > 0 {
		e.RetryAfterMS = lim.RetryAfter.Milliseconds() + 1
	}
	return e
}

// kept says whether an outcome of this kind is replayed to later callers:
// the tool's own answers are; outcomes that say "not now" (transient,
// timeout, circuit open, rate limited) or reflect one caller's budget are
// not, so the next caller runs the tool again.
func kept(k Kind) bool {
	switch k {
	case KindSchema, KindInternal, KindNotFound:
		return true
	}
	return false
}

// detach keeps ctx's values and deadline but not its cancellation; the
// returned context is cancelled by its CancelFunc.
func detach(ctx context.Context) (context.Context, context.CancelFunc) {
	dctx := context.WithoutCancel(ctx)
	if deadline, ok := ctx.Deadline(); ok {
		return context.WithDeadline(dctx, deadline)
	}
	return context.WithCancel(dctx)
}

// classifyWait is the envelope for a caller whose context ended before its
// call ran or finished.
func classifyWait(tool string, ctx context.Context, attempts int) *DispatchError {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return newError(KindTimeout, attempts, ctx.Err(), "tool %s: the caller's deadline passed before the call finished", tool)
	}
	return newError(KindInternal, attempts, ctx.Err(), "tool %s: the call was cancelled by its caller", tool)
}

// cancelled reports whether ctx was cancelled (not timed out): the caller
// went away, so nobody reads the outcome.
func cancelled(ctx context.Context) bool {
	return errors.Is(ctx.Err(), context.Canceled)
}

// scopedKey namespaces a key by the caller's identity.
func scopedKey(caller, key string) string {
	return caller + "\x00" + key
}

// fingerprint digests the tool name and the arguments in canonical form
// (object keys sorted, numbers as written), so a retry that reorders keys
// is the same request and a changed value is not.
func fingerprint(tool string, args json.RawMessage) (string, error) {
	var v any
	if len(bytes.TrimSpace(args)) > 0 {
		dec := json.NewDecoder(bytes.NewReader(args))
		dec.UseNumber()
		if err := dec.Decode(&v); err != nil {
			return "", err
		}
	}
	canon, err := json.Marshal(v)
	if err != nil {
		return "", err
	}
	h := sha256.New()
	h.Write([]byte(tool))
	h.Write([]byte{0})
	h.Write(canon)
	return hex.EncodeToString(h.Sum(nil)), nil
}
