package governor

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"
)

// quota is one quota's line of waiters in this process, and its last
// known shared state. The store is the authority on tokens; the line
// decides who asks it next.
type quota struct {
	g       *Governor
	name    string
	limit   Limit
	reserve int64 // throttle reserve for background draws; normal ones leave half

	mu      sync.Mutex
	waiters []*waiter // sorted by effective class, then arrival, at each pump
	seq     uint64
	timer   *time.Timer // wakes the line when the head's tokens are due
	unblock *time.Timer // refreshes the mode when a block lifts
	closed  bool

	throttled    bool
	mode         Mode
	epoch        uint64
	used         int64
	available    float64
	blockedUntil time.Time
	agents       map[string]int64 // per agent over the window, as of the last Peek
}

type waiter struct {
	prio     Priority
	cost     int64
	agent    string
	since    time.Time
	deadline time.Time
	seq      uint64
	done     chan struct{} // closed once err is final
	err      error         // nil: granted
}

func (w *waiter) decide(err error) {
	w.err = err
	close(w.done)
}

// rank is the waiter's effective class: its own, plus one per Aging
// waited.
func (q *quota) rank(w *waiter, now time.Time) int {
	return int(w.prio) + int(now.Sub(w.since)/q.g.cfg.Aging)
}

// reserveFor is what a draw of the given effective class must leave in
// the pool: nothing outside throttle mode or for interactive and above.
func (q *quota) reserveFor(rank int) int64 {
	if !q.throttled {
		return 0
	}
	switch {
	case rank >= int(Interactive):
		return 0
	case rank == int(Normal):
		return q.reserve / 2
	default:
		return q.reserve
	}
}

// acquire waits in line for cost tokens, counted under agent, and returns
// how long it waited.
func (q *quota) acquire(ctx context.Context, cost int64, prio Priority, agent string) (time.Duration, error) {
	// A cancelled caller gets nothing; one whose deadline has passed
	// still gets tokens that are there now, or a refusal with an estimate.
	if errors.Is(ctx.Err(), context.Canceled) {
		return 0, ctx.Err()
	}
	now := time.Now()
	deadline := now.Add(q.g.cfg.MaxWait)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	w := &waiter{prio: prio, cost: cost, agent: agent, since: now, deadline: deadline, done: make(chan struct{})}
	q.mu.Lock()
	w.seq = q.seq
	q.seq++
	q.waiters = append(q.waiters, w)
	q.pump(ctx)
	q.mu.Unlock()

	select {
	case <-w.done:
		return time.Since(now), w.err
	default:
	}
	wctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	select {
	case <-w.done:
	case <-wctx.Done():
		q.mu.Lock()
		if i := slices.Index(q.waiters, w); i >= 0 {
			q.waiters = slices.Delete(q.waiters, i, i+1)
			if err := ctx.Err(); errors.Is(err, context.Canceled) {
				w.decide(err)
			} else {
				w.decide(&LimitError{Quota: q.name, Reason: fmt.Sprintf("waited %v in line and the quota could not grant %d tokens before the deadline",
					time.Since(now).Round(time.Millisecond), cost)})
			}
			q.pump(context.WithoutCancel(ctx))
		}
		q.mu.Unlock()
		<-w.done
	}
	return time.Since(now), w.err
}

// pump serves the line: the head (highest effective class, then earliest)
// draws from the store while it can; then every waiter whose estimated
// turn falls after its deadline fails fast; then the timer is set for when
// the head's tokens are due. Called with q.mu held.
func (q *quota) pump(ctx context.Context) {
	ctx = context.WithoutCancel(ctx) // one caller leaving must not fail the others' store calls
	for !q.closed && len(q.waiters) > 0 {
		now := time.Now()
		slices.SortStableFunc(q.waiters, func(a, b *waiter) int {
			if ra, rb := q.rank(a, now), q.rank(b, now); ra != rb {
				return rb - ra
			}
			return cmp.Compare(a.seq, b.seq)
		})
		head := q.waiters[0]
		res, err := q.g.cfg.Store.Take(ctx, q.name, q.limit, Draw{Cost: head.cost, Reserve: q.reserveFor(q.rank(head, now)), Agent: head.agent})
		if err != nil {
			q.waiters = q.waiters[1:]
			head.decide(fmt.Errorf("quota %s: store: %w", q.name, err))
			continue
		}
		q.observe(res)
		if res.Granted {
			q.waiters = q.waiters[1:]
			head.decide(nil)
			continue
		}
		if q.failHopeless(now, res.Wait) {
			continue // the line changed: look at the new head
		}
		q.arm(res.Wait)
		return
	}
	if q.timer != nil {
		q.timer.Stop()
	}
}

// failHopeless fails every waiter whose turn, estimated as the head's wait
// plus the cost of everyone ahead of it at the quota's rate, comes after
// its deadline. It reports whether it failed any.
func (q *quota) failHopeless(now time.Time, headWait time.Duration) bool {
	T := q.limit.Emission()
	at := headWait
	kept := q.waiters[:0]
	failed := false
	for i, w := range q.waiters {
		if i > 0 {
			at += time.Duration(w.cost) * T
		}
		if now.Add(at).After(w.deadline) {
			w.decide(&LimitError{Quota: q.name, RetryAfter: at,
				Reason: fmt.Sprintf("cannot grant %d tokens before the deadline (%v away); estimated wait %v (mode %s, %d waiting)",
					w.cost, max(w.deadline.Sub(now), 0).Round(time.Millisecond), at.Round(time.Millisecond), q.mode, len(q.waiters))})
			failed = true
			continue
		}
		kept = append(kept, w)
	}
	clear(q.waiters[len(kept):])
	q.waiters = kept
	return failed
}

func (q *quota) arm(d time.Duration) {
	d = max(d, time.Millisecond/10)
	if q.timer == nil {
		q.timer = time.AfterFunc(d, q.wake)
		return
	}
	q.timer.Reset(d)
}

func (q *quota) wake() {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.pump(context.Background())
}

// armUnblock refreshes the mode when a block lifts, so that the change is
// published even if no one draws. Called with q.mu held.
func (q *quota) armUnblock(d time.Duration) {
	if q.closed {
		return
	}
	if q.unblock == nil {
		q.unblock = time.AfterFunc(d, func() { _, _ = q.refresh(context.Background()) })
		return
	}
	q.unblock.Reset(d)
}

// block records an upstream 429 or 503 in the store, and re-estimates the
// line (waiters whose deadline falls inside the block fail now).
func (q *quota) block(ctx context.Context, d time.Duration) (State, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	res, err := q.g.cfg.Store.Block(context.WithoutCancel(ctx), q.name, q.limit, d)
	if err != nil {
		return q.stateLocked(), fmt.Errorf("quota %s: store: %w", q.name, err)
	}
	q.observe(res)
	q.pump(ctx)
	return q.stateLocked(), nil
}

// refresh reads the shared state without drawing.
func (q *quota) refresh(ctx context.Context) (State, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	res, err := q.g.cfg.Store.Peek(context.WithoutCancel(ctx), q.name, q.limit)
	if err != nil {
		return q.stateLocked(), fmt.Errorf("quota %s: store: %w", q.name, err)
	}
	q.observe(res)
	return q.stateLocked(), nil
}

func (q *quota) stopTimers() {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.closed = true
	for _, t := range []*time.Timer{q.timer, q.unblock} {
		if t != nil {
			t.Stop()
		}
	}
}

// refund returns cost tokens to the pool (see Store.Refund). A store error
// is dropped: the call has already failed for another reason, and a lost
// refund costs only throughput, never correctness.
func (q *quota) refund(ctx context.Context, cost int64, agent string) {
	_ = q.g.cfg.Store.Refund(context.WithoutCancel(ctx), q.name, q.limit, cost, agent)
}
