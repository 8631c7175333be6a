package governor

import (
	"context"
	"time"
)

// Store holds the state every replica of toolhost must share for a quota:
// its token pool, its usage over the throttle window and its blocked_until.
// The in-memory Memory is the default; a Redis implementation slots in
// here (one key per quota, the operations below as Lua scripts, and the
// server's clock from Redis TIME) without touching the Governor.
//
// Every method takes the quota's Limit so that the store keeps no
// configuration of its own, and answers in durations relative to the
// store's own clock, never in the caller's: replicas' clocks may differ.
// Implementations must be safe for concurrent use, and each method must be
// atomic with respect to the others for the same quota.
type Store interface {
	// Take draws d.Cost tokens from the quota's pool if, after the draw,
	// at least d.Reserve tokens would remain and the quota is not
	// blocked; otherwise it draws nothing and says how long until it
	// could.
	Take(ctx context.Context, quota string, l Limit, d Draw) (Result, error)
	// Block extends the quota's blocked_until to at least the store's now
	// plus dur, and empties the pool at that moment, so that when the
	// block lifts tokens come back at the quota's rate, not in a burst.
	Block(ctx context.Context, quota string, l Limit, dur time.Duration) (Result, error)
	// Peek reports the quota's state without drawing.
	Peek(ctx context.Context, quota string, l Limit) (Result, error)
	// Refund gives back cost tokens a Take granted for a purpose that fell
	// through (another quota of the same call refused): the pool gets them
	// back, never beyond full, and the usage window stops counting them,
	// for the quota and for agent (the Draw's Agent).
	Refund(ctx context.Context, quota string, l Limit, cost int64, agent string) error
}

// Limit is a quota's shape: Capacity tokens per Interval, at most Burst at
// once, usage measured over Window, for at most Agents named agents at
// once (the rest fold into OtherAgent).
type Limit struct {
	Capacity int64
	Interval time.Duration
	Burst    int64
	Window   time.Duration
	Agents   int
}

// OtherAgent is the name under which a store counts the draws of agents
// beyond a quota's Limit.Agents: an agent that draws while that many
// others drew in the window is counted here until one of them ages out.
const OtherAgent = "other"

// Emission is the time one token takes to come back: Interval/Capacity,
// rounded up to the nanosecond so that rounding never grants more than
// the quota.
func (l Limit) Emission() time.Duration {
	return time.Duration((int64(l.Interval) + l.Capacity - 1) / l.Capacity)
}

// Allowance is what the quota grants over Window at its steady rate: the
// number the throttle thresholds are fractions of.
func (l Limit) Allowance() float64 {
	return float64(l.Capacity) * float64(l.Window) / float64(l.Interval)
}

// Draw is one request for tokens.
type Draw struct {
	// Cost is the tokens drawn, from 1 to the quota's Burst.
	Cost int64
	// Reserve is how many tokens must remain after the draw (throttle
	// mode keeps them for higher classes); 0 for none.
	Reserve int64
	// Agent is who draws (a governor.acquire's agent, a tool call's
	// caller identity; empty for an anonymous one), already cleaned by
	// the governor (see CleanAgent). The store counts its usage over the
	// window, beside the quota's.
	Agent string
}

// Result is a store's answer.
type Result struct {
	// Granted says Take drew the tokens.
	Granted bool
	// Wait, when Take did not grant, is how long until it could (at the
	// earliest: other draws may come first).
	Wait time.Duration
	// Available is the tokens in the pool now, after this draw.
	Available float64
	// Used is the cost granted over the last Window, this draw included.
	Used int64
	// Blocked is how long the quota stays blocked; 0 when it is not.
	Blocked time.Duration
	// Now is the store's clock when it answered.
	Now time.Time
	// Agents is the cost granted over the last Window per agent, at most
	// Limit.Agents names plus OtherAgent; their sum is Used. Peek always
	// reports it (empty, not nil, when nobody drew); Take and Block leave
	// it nil, so that a draw costs no read of every agent's usage.
	Agents map[string]int64
}

// Shared is implemented by a Store that several replicas share (Redis):
// it carries the news that a quota's mode or blocked_until changed on one
// replica to the others, which then read the quota at once instead of at
// their next draw or broadcast, so every replica's events and status show
// the same state.
type Shared interface {
	// Changed tells the other replicas that quota changed here. It must
	// not block.
	Changed(quota string)
	// OnChanged registers f, called with the name of a quota that
	// changed on another replica.
	OnChanged(f func(quota string))
}
