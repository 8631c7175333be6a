// Package governor shares upstream quotas among everything that spends
// them: tool calls, the egress requests tools make, and external agents
// that call an API themselves. Each quota is one token pool; every draw
// asks the governor first, so that nine agents behind one quota stop
// retrying into each other's 429s.
//
// For one quota the Governor keeps, in this process, a queue of waiting
// draws served in priority order (critical > interactive > normal >
// background, raised by aging), and fails a waiter fast with
// ErrRateLimited when its deadline cannot be met. The pool itself, the
// usage over the throttle window and blocked_until live in a Store, so
// that several replicas can share them (Memory is the in-process default).
//
// A quota is in one of three modes. Normal. Throttled, when the last
// Window (10 s) used at least ThrottleEnter (80%) of what the quota allows
// in it, until usage falls below ThrottleExit (60%): normal and background
// draws must then leave a reserve in the pool for critical and interactive
// ones. Blocked, after an upstream 429 (reported by egress or an agent)
// until its Retry-After passes: nothing is granted, and when the block
// lifts the pool starts empty, so waiters are released one emission
// interval apart, in priority order, not all at once. Every change of mode
// or blocked_until, and every Broadcast interval, publishes a
// governor.state event.
package governor

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/toolhost/toolhost/events"
	"github.com/toolhost/toolhost/internal/hostmatch"
)

// Quota is one upstream quota and what draws on it.
type Quota struct {
	// Name identifies the quota (in events, /rpc and the config file).
	Name string
	// Capacity tokens are granted per Interval at the steady rate.
	Capacity int64
	Interval time.Duration
	// Burst is the most tokens granted at once; 0 means a second's worth
	// of Capacity (at least 1).
	Burst int64
	// Hosts are the egress host patterns ("api.example.com",
	// "*.example.com", optionally with ":PORT") whose requests draw one
	// token each.
	Hosts []string
	// Tools maps a tool name to the tokens each call of it draws.
	Tools map[string]int64
}

// Config configures a Governor. The zero value, with some Quotas, is
// usable: every field documents its default.
type Config struct {
	// Quotas are the quotas; names must be unique.
	Quotas []Quota
	// Store shares pools between replicas; nil means a new Memory.
	Store Store
	// Events receives governor.state events; nil means none.
	Events *events.Bus
	// Window is the throttle look-back; 0 means 10 s.
	Window time.Duration
	// ThrottleEnter is the fraction of the Window's allowance whose use
	// puts a quota in throttle mode; 0 means 0.8.
	ThrottleEnter float64
	// ThrottleExit is the fraction below which it leaves; 0 means 0.6.
	// It must be below ThrottleEnter (hysteresis).
	ThrottleExit float64
	// ThrottleReserve is the fraction of a quota's Burst that background
	// draws must leave in the pool in throttle mode (normal draws half of
	// it), kept for critical and interactive ones; 0 means 0.5, a
	// negative value means no reserve. It is at most Burst-1 tokens, so
	// with a Burst of 1 throttling reserves nothing.
	ThrottleReserve float64
	// Aging raises a waiter's effective class by one per Aging waited; 0
	// means 5 s.
	Aging time.Duration
	// Broadcast is how often every quota's state is published even when
	// nothing changed; 0 means 5 s, negative means never.
	Broadcast time.Duration
	// MaxWait bounds a wait whose context has no deadline; 0 means 30 s.
	MaxWait time.Duration
	// DefaultBlock is how long a 429 or 503 without Retry-After blocks its
	// quota; 0 means 1 s. MaxBlock caps any block; 0 means 5 min.
	DefaultBlock time.Duration
	MaxBlock     time.Duration
	// MaxReportBlock caps the block one governor.report over /rpc can
	// set; 0 means 30 s. Any identity with a token may report, as any may
	// acquire: a report holds a quota about as long as draining its
	// tokens would, not the 5 minutes of MaxBlock. The host's own egress
	// reports, which it saw itself, keep MaxBlock.
	MaxReportBlock time.Duration
	// Priorities is the default class per tool name, for calls that name
	// none; a tool not listed gets Normal.
	Priorities map[string]Priority
	// MaxAgents is how many agents each quota counts by name at once;
	// draws of agents beyond it count under OtherAgent until one of the
	// named ones has drawn nothing for a Window. 0 means
	// DefaultMaxAgents; at most MaxMaxAgents.
	MaxAgents int
}

func (c Config) withDefaults() Config {
	c.Window = cmp.Or(c.Window, 10*time.Second)
	c.ThrottleEnter = cmp.Or(c.ThrottleEnter, 0.8)
	c.ThrottleExit = cmp.Or(c.ThrottleExit, 0.6)
	switch {
	case c.ThrottleReserve < 0: // asked for none: 0 itself means the default
		c.ThrottleReserve = 0
	case c.ThrottleReserve == 0:
		c.ThrottleReserve = 0.5
	}
	c.Aging = cmp.Or(c.Aging, 5*time.Second)
	c.Broadcast = cmp.Or(c.Broadcast, 5*time.Second)
	c.MaxWait = cmp.Or(c.MaxWait, 30*time.Second)
	c.DefaultBlock = cmp.Or(c.DefaultBlock, time.Second)
	c.MaxBlock = cmp.Or(c.MaxBlock, 5*time.Minute)
	c.MaxReportBlock = cmp.Or(c.MaxReportBlock, 30*time.Second)
	c.MaxAgents = cmp.Or(c.MaxAgents, DefaultMaxAgents)
	if c.Store == nil {
		c.Store = NewMemory()
	}
	return c
}

// Governor grants draws on shared quotas. It is safe for concurrent use.
// Close it to stop its periodic broadcast.
type Governor struct {
	cfg    Config
	quotas map[string]*quota
	sorted []*quota
	hosts  []hostRule
	tools  map[string][]toolDraw

	stop      chan struct{}
	done      chan struct{}
	closeOnce sync.Once
}

type hostRule struct {
	pattern hostmatch.Pattern
	quota   *quota
}

type toolDraw struct {
	quota *quota
	cost  int64
}

// New checks cfg and starts the governor. An error names the quota and
// what is wrong with it.
func New(cfg Config) (*Governor, error) {
	cfg = cfg.withDefaults()
	if !(cfg.ThrottleExit < cfg.ThrottleEnter) || cfg.ThrottleEnter > 1 || cfg.ThrottleExit < 0 {
		return nil, fmt.Errorf("governor: throttle thresholds must satisfy 0 <= exit (%v) < enter (%v) <= 1", cfg.ThrottleExit, cfg.ThrottleEnter)
	}
	if cfg.ThrottleReserve < 0 || cfg.ThrottleReserve > 1 {
		return nil, fmt.Errorf("governor: throttle reserve %v is not between 0 and 1", cfg.ThrottleReserve)
	}
	if cfg.MaxAgents < 1 || cfg.MaxAgents > MaxMaxAgents {
		return nil, fmt.Errorf("governor: max agents %d is not between 1 and %d", cfg.MaxAgents, MaxMaxAgents)
	}
	g := &Governor{cfg: cfg, quotas: make(map[string]*quota), tools: make(map[string][]toolDraw),
		stop: make(chan struct{}), done: make(chan struct{})}
	epoch := uint64(max(time.Now().UnixMilli(), 0))
	for _, qc := range cfg.Quotas {
		q, err := newQuota(g, qc, epoch)
		if err != nil {
			return nil, err
		}
		if _, dup := g.quotas[q.name]; dup {
			return nil, fmt.Errorf("governor: quota %q defined twice", q.name)
		}
		g.quotas[q.name] = q
		g.sorted = append(g.sorted, q)
		for _, h := range qc.Hosts {
			p, err := hostmatch.Parse(h)
			if err != nil {
				return nil, fmt.Errorf("governor: quota %q: %v", q.name, err)
			}
			g.hosts = append(g.hosts, hostRule{p, q})
		}
		for _, tool := range slices.Sorted(maps.Keys(qc.Tools)) {
			cost := qc.Tools[tool]
			if cost < 1 || cost > q.limit.Burst {
				return nil, fmt.Errorf("governor: quota %q: tool %s draws %d tokens per call; it must draw from 1 to the burst (%d)",
					q.name, tool, cost, q.limit.Burst)
			}
			g.tools[tool] = append(g.tools[tool], toolDraw{q, cost})
		}
	}
	slices.SortFunc(g.sorted, func(a, b *quota) int { return strings.Compare(a.name, b.name) })
	if sh, ok := cfg.Store.(Shared); ok {
		sh.OnChanged(g.changedElsewhere)
	}
	if cfg.Broadcast > 0 && len(g.sorted) > 0 {
		go g.broadcast()
	} else {
		close(g.done)
	}
	return g, nil
}

func newQuota(g *Governor, qc Quota, epoch uint64) (*quota, error) {
	if qc.Name == "" {
		return nil, fmt.Errorf("governor: a quota has no name")
	}
	if qc.Capacity < 1 || qc.Interval <= 0 {
		return nil, fmt.Errorf("governor: quota %q: capacity (%d) and interval (%v) must be positive", qc.Name, qc.Capacity, qc.Interval)
	}
	if qc.Interval/time.Duration(qc.Capacity) < 1 {
		return nil, fmt.Errorf("governor: quota %q: more than one token per nanosecond", qc.Name)
	}
	burst := qc.Burst
	if burst == 0 {
		burst = max(1, int64(math.Ceil(float64(qc.Capacity)*float64(time.Second)/float64(qc.Interval))))
		burst = min(burst, qc.Capacity)
	}
	if burst < 1 {
		return nil, fmt.Errorf("governor: quota %q: burst %d must be at least 1", qc.Name, burst)
	}
	l := Limit{Capacity: qc.Capacity, Interval: qc.Interval, Burst: burst, Window: g.cfg.Window, Agents: g.cfg.MaxAgents}
	reserve := min(int64(math.Ceil(g.cfg.ThrottleReserve*float64(burst))), burst-1)
	return &quota{g: g, name: qc.Name, limit: l, reserve: reserve, epoch: epoch, mode: ModeNormal}, nil
}

// Request is one draw on a quota.
type Request struct {
	// Quota names the quota.
	Quota string
	// Cost is the tokens drawn; 0 means 1.
	Cost int64
	// Priority is the draw's class.
	Priority Priority
	// Agent names who draws, for the per-agent usage (see CleanAgent).
	Agent string
}

// Grant is a granted draw.
type Grant struct {
	Quota    string        `json:"quota"`
	Cost     int64         `json:"cost"`
	Priority Priority      `json:"priority"`
	Waited   time.Duration `json:"-"`
}

// Acquire draws r.Cost tokens from r.Quota, waiting in line behind draws
// of higher effective class until the tokens are there. It fails fast
// with a *LimitError when the wait would outlast ctx's deadline (or
// MaxWait, without one), and with ctx's error when ctx is cancelled.
func (g *Governor) Acquire(ctx context.Context, r Request) (Grant, error) {
	q, ok := g.quotas[r.Quota]
	if !ok {
		return Grant{}, fmt.Errorf("%w: no quota named %q (quotas: %s)", ErrInvalid, r.Quota, strings.Join(g.names(), ", "))
	}
	cost := cmp.Or(r.Cost, 1)
	if cost < 1 || cost > q.limit.Burst {
		return Grant{}, fmt.Errorf("%w: cost %d for quota %q must be from 1 to its burst (%d)", ErrInvalid, cost, q.name, q.limit.Burst)
	}
	if r.Priority < Background || r.Priority > Critical {
		return Grant{}, fmt.Errorf("%w: %v", ErrInvalid, r.Priority)
	}
	waited, err := q.acquire(ctx, cost, r.Priority, CleanAgent(r.Agent))
	if err != nil {
		return Grant{}, err
	}
	return Grant{Quota: q.name, Cost: cost, Priority: r.Priority, Waited: waited}, nil
}

// Feedback is what an upstream answered, reported by an agent or egress.
type Feedback struct {
	Quota string
	// Status is the HTTP status. 429 and 503 block the quota; other
	// statuses change nothing.
	Status int
	// RetryAfter is the upstream's Retry-After; 0 means DefaultBlock.
	RetryAfter time.Duration
}

// Report feeds an upstream answer back. A 429 or 503 sets the quota's
// shared blocked_until to now plus its Retry-After (capped at MaxBlock),
// unless it is already later. It returns the quota's state after.
func (g *Governor) Report(ctx context.Context, f Feedback) (State, error) {
	q, ok := g.quotas[f.Quota]
	if !ok {
		return State{}, fmt.Errorf("%w: no quota named %q (quotas: %s)", ErrInvalid, f.Quota, strings.Join(g.names(), ", "))
	}
	if f.Status == 429 || f.Status == 503 {
		d := f.RetryAfter
		if d <= 0 {
			d = g.cfg.DefaultBlock
		}
		return q.block(ctx, min(d, g.cfg.MaxBlock))
	}
	return q.refresh(ctx)
}

// Status returns every quota's state, by name. A store error leaves that
// quota's last known state.
func (g *Governor) Status(ctx context.Context) []State {
	out := make([]State, 0, len(g.sorted))
	for _, q := range g.sorted {
		s, _ := q.refresh(ctx)
		out = append(out, s)
	}
	return out
}

// Admit is the dispatcher's step: it resolves the call's priority (the
// given class name; if empty, the tool's default; else normal), draws each
// quota the tool draws on, counted under caller (the call's identity), and
// returns ctx carrying the priority and the caller for the draws the
// call's egress makes. An unknown priority name is an error wrapping
// ErrInvalid.
func (g *Governor) Admit(ctx context.Context, tool, priority, caller string) (context.Context, error) {
	p, ok := g.cfg.Priorities[tool]
	if !ok {
		p = Normal
	}
	if priority != "" {
		var err error
		if p, err = ParsePriority(priority); err != nil {
			return ctx, err
		}
	}
	agent := CleanAgent(caller)
	ctx = WithAgent(WithPriority(ctx, p), agent)
	draws := g.tools[tool]
	for i, d := range draws {
		if _, err := d.quota.acquire(ctx, d.cost, p, agent); err != nil {
			// All or nothing: the quotas already drawn get their tokens
			// back, or a call refused by its second quota would spend its
			// first for nothing.
			for _, done := range draws[:i] {
				done.quota.refund(ctx, done.cost, agent)
			}
			return ctx, err
		}
	}
	return ctx, nil
}

// AcquireHost draws one token from every quota whose Hosts match hostname
// and port, at the priority ctx carries (normal without one), counted
// under the agent it carries (see WithAgent). Hosts that match no quota
// are not limited.
func (g *Governor) AcquireHost(ctx context.Context, hostname, port string) error {
	p, ok := PriorityFrom(ctx)
	if !ok {
		p = Normal
	}
	agent := CleanAgent(AgentFrom(ctx))
	quotas := g.hostQuotas(hostname, port)
	for i, q := range quotas {
		if _, err := q.acquire(ctx, 1, p, agent); err != nil {
			for _, done := range quotas[:i] {
				done.refund(ctx, 1, agent) // all or nothing, as in Admit
			}
			return err
		}
	}
	return nil
}

// ReportHost reports an upstream answer to every quota whose Hosts match
// hostname and port (see Report).
func (g *Governor) ReportHost(ctx context.Context, hostname, port string, status int, retryAfter time.Duration) {
	for _, q := range g.hostQuotas(hostname, port) {
		_, _ = g.Report(ctx, Feedback{Quota: q.name, Status: status, RetryAfter: retryAfter})
	}
}

func (g *Governor) hostQuotas(hostname, port string) []*quota {
	var out []*quota
	for _, r := range g.hosts {
		if r.pattern.Match(hostname, port) && !slices.Contains(out, r.quota) {
			out = append(out, r.quota)
		}
	}
	return out
}

// Config returns the configuration g runs with, every default applied (a
// negative ThrottleReserve reads as 0). Its Quotas are g's.
func (g *Governor) Config() Config { return g.cfg }

// Quotas returns the quota names, sorted.
func (g *Governor) Quotas() []string { return g.names() }

func (g *Governor) names() []string {
	out := make([]string, len(g.sorted))
	for i, q := range g.sorted {
		out[i] = q.name
	}
	return out
}

// Close stops the periodic broadcast and every quota's timers. Waiters
// still in line keep waiting until their deadlines. It may be called more
// than once.
func (g *Governor) Close() {
	g.closeOnce.Do(func() {
		close(g.stop)
		<-g.done
		for _, q := range g.sorted {
			q.stopTimers()
		}
	})
}

// changedElsewhere reads a quota another replica changed, which
// publishes its new state here when it differs.
func (g *Governor) changedElsewhere(name string) {
	if q, ok := g.quotas[name]; ok {
		go func() { _, _ = q.refresh(context.Background()) }()
	}
}

func (g *Governor) broadcast() {
	defer close(g.done)
	t := time.NewTicker(g.cfg.Broadcast)
	defer t.Stop()
	for {
		select {
		case <-g.stop:
			return
		case <-t.C:
			for _, q := range g.sorted {
				s, err := q.refresh(context.Background())
				if err == nil {
					q.publish(s)
				}
			}
		}
	}
}
