package governor

import (
	"context"
	"math"
	"time"
)

// EventState is the type of the events the governor publishes.
const EventState = "governor.state"

// Mode is a quota's mode.
type Mode string

// The modes a quota can be in.
const (
	// ModeNormal: draws are granted in priority order as tokens allow.
	ModeNormal Mode = "normal"
	// ModeThrottled: the last Window used at least ThrottleEnter of its
	// allowance; normal and background draws must leave a reserve.
	ModeThrottled Mode = "throttled"
	// ModeBlocked: an upstream 429 or 503 blocks the quota until
	// BlockedUntil; nothing is granted.
	ModeBlocked Mode = "blocked"
)

// State is a quota's state: the data of a governor.state event, and what
// Status returns. Receivers compare Epoch: it grows by one with every
// change of Mode or BlockedUntil (starting from the governor's start time
// in Unix milliseconds, so that it keeps growing across restarts), and a
// state with an epoch older than one already seen is stale.
type State struct {
	Quota string `json:"quota"`
	Epoch uint64 `json:"epoch"`
	// Used is the cost granted over the last Window.
	Used int64 `json:"used"`
	// Capacity is what the quota allows over the Window at its steady
	// rate: Used/Capacity is the ratio the throttle thresholds compare.
	Capacity int64 `json:"capacity"`
	Mode     Mode  `json:"mode"`
	// BlockedUntil is when the block lifts, in the store's clock; null
	// when the quota is not blocked.
	BlockedUntil *time.Time `json:"blocked_until"`
	// WindowMS is the Window, in milliseconds.
	WindowMS int64 `json:"window_ms"`
	// Available is the tokens in the pool now.
	Available float64 `json:"available"`
	// Waiting is how many draws wait in this process's line.
	Waiting int `json:"waiting"`
	// Limit is the quota's shape.
	Limit LimitInfo `json:"limit"`
	// ThrottleAt is the Used at which the quota starts to throttle
	// (Config.ThrottleEnter of Capacity), and ThrottleBelow the Used under
	// which it stops again (ThrottleExit): the throttle point, before any
	// upstream 429.
	ThrottleAt    int64 `json:"throttle_at"`
	ThrottleBelow int64 `json:"throttle_below"`
	// Agents is the cost granted over the last Window per agent (a
	// governor.acquire's agent, a tool call's caller identity, "" for
	// an anonymous one), at most Config.MaxAgents names plus
	// OtherAgent. Status and the governor.state events carry it, read
	// from the store with the rest of the state; it is absent where it
	// was not read (the state in a governor.acquire result).
	Agents map[string]AgentUsage `json:"agents,omitzero"`
}

// AgentUsage is one agent's share of a quota.
type AgentUsage struct {
	// Used is the cost granted to the agent over the last Window.
	Used int64 `json:"used"`
}

// LimitInfo is a quota's shape as reported in State.
type LimitInfo struct {
	Capacity   int64 `json:"capacity"`
	IntervalMS int64 `json:"interval_ms"`
	Burst      int64 `json:"burst"`
}

// observe folds a store answer into the quota's state, moving between
// modes with hysteresis, and publishes a governor.state event when the
// mode or blocked_until changed. Called with q.mu held.
func (q *quota) observe(res Result) {
	q.used = res.Used
	q.available = res.Available
	if res.Agents != nil {
		q.agents = res.Agents
	}
	ratio := float64(res.Used) / q.limit.Allowance()
	switch {
	case !q.throttled && ratio >= q.g.cfg.ThrottleEnter:
		q.throttled = true
	case q.throttled && ratio < q.g.cfg.ThrottleExit:
		q.throttled = false
	}
	var until time.Time
	if res.Blocked > 0 {
		until = res.Now.Add(res.Blocked).Round(time.Millisecond)
	}
	mode := ModeNormal
	switch {
	case res.Blocked > 0:
		mode = ModeBlocked
		q.armUnblock(res.Blocked)
	case q.throttled:
		mode = ModeThrottled
	}
	if mode == q.mode && until.Equal(q.blockedUntil) {
		return
	}
	q.mode, q.blockedUntil = mode, until
	q.epoch++
	if res.Agents == nil && q.g.cfg.Events.Enabled() {
		// A draw's answer has no agents: read them, so that the event
		// is the whole state. Mode changes are rare; draws are not.
		if r, err := q.g.cfg.Store.Peek(context.Background(), q.name, q.limit); err == nil {
			q.agents = r.Agents
		}
	}
	q.publish(q.stateLocked())
	if sh, ok := q.g.cfg.Store.(Shared); ok {
		sh.Changed(q.name)
	}
}

func (q *quota) stateLocked() State {
	s := State{Quota: q.name, Epoch: q.epoch, Used: q.used, Capacity: int64(math.Floor(q.limit.Allowance())),
		Mode: q.mode, WindowMS: q.limit.Window.Milliseconds(), Available: math.Round(q.available*1000) / 1000,
		Waiting:       len(q.waiters),
		Limit:         LimitInfo{Capacity: q.limit.Capacity, IntervalMS: q.limit.Interval.Milliseconds(), Burst: q.limit.Burst},
		ThrottleAt:    int64(math.Ceil(q.g.cfg.ThrottleEnter * q.limit.Allowance())),
		ThrottleBelow: int64(math.Ceil(q.g.cfg.ThrottleExit * q.limit.Allowance()))}
	if !q.blockedUntil.IsZero() {
		t := q.blockedUntil.UTC()
		s.BlockedUntil = &t
	}
	s.Agents = make(map[string]AgentUsage, len(q.agents))
	for name, used := range q.agents {
		s.Agents[name] = AgentUsage{Used: used}
	}
	return s
}

func (q *quota) publish(s State) {
	if b := q.g.cfg.Events; b.Enabled() {
		b.Publish(EventState, s)
	}
}
