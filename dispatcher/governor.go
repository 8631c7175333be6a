package dispatcher

import (
	"context"
	"errors"

	"github.com/toolhost/toolhost/governor"
)

// Governor is the rate governor the dispatcher consults once per attempt,
// after idempotency (so a replayed or joined call draws nothing) and
// before the attempt takes a concurrency slot (*governor.Governor
// implements it). Admit must be safe for concurrent use. It waits until the quotas the
// tool draws on grant the call (or fails fast), counting the draws under
// caller (the call's identity) for the governor's per-agent usage, and returns ctx carrying
// what the call's own draws need (its priority, for egress). Its errors
// wrap governor.ErrRateLimited (a *governor.LimitError with an estimate),
// governor.ErrInvalid (an unknown priority class), or ctx's error.
type Governor interface {
	Admit(ctx context.Context, tool, priority, caller string) (context.Context, error)
}

// govern is one attempt's governor draw: no governor, no wait. attempts is
// how many attempts came before, for the envelope.
func (x *dispatch) govern(ctx context.Context, attempts int) (_ context.Context, derr *DispatchError) {
	if x.d.governor == nil {
		return ctx, nil
	}
	tool := x.tool
	span := x.d.governorSpan(ctx, tool, x.c)
	gctx, err := x.d.governor.Admit(ctx, tool.Name, x.c.Priority, x.c.Caller)
	if err == nil {
		span.End()
		return gctx, nil
	}
	defer func() { endSpan(span, derr) }()
	var le *governor.LimitError
	switch {
	case errors.As(err, &le):
		de := newError(KindRateLimited, attempts, err, "tool %s: %s", tool.Name, le.Error())
		de.RetryAfterMS = le.RetryAfter.Milliseconds()
		return ctx, de
	case errors.Is(err, governor.ErrInvalid):
		return ctx, newError(KindSchema, attempts, err, "%s", err.Error())
	case ctx.Err() != nil:
		return ctx, classifyWait(tool.Name, ctx, attempts)
	}
	return ctx, newError(KindInternal, attempts, err, "tool %s: governor: %v", tool.Name, err)
}
