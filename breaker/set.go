package breaker

import (
	"slices"
	"strings"
	"sync"
	"time"
)

// SetOptions are a Set's hooks; the zero value is usable.
type SetOptions struct {
	// Rand returns draws from U[0,1) for every breaker's jitter; nil
	// means math/rand/v2's Float64. Breakers call it concurrently, each
	// under its own lock: it must be safe for concurrent use.
	Rand func() float64
	// OnChange, if not nil, is told of every transition of every breaker,
	// with the breaker's tool name, as Options.OnChange describes.
	// Different tools' changes may be delivered concurrently.
	OnChange func(tool string, from, to State)
	// Shared, if not nil, carries openings between replicas (package
	// breaker/redisstore); nil keeps every breaker to this process.
	Shared Shared
	// Known, if not nil, says whether a tool is served now (it must be
	// safe for concurrent use). The Set then holds breakers only for
	// known tools: an opening another replica announces for any other
	// name is ignored, For gives a name that is not known a breaker it
	// does not keep (its transitions are not reported), and Prune drops
	// the breakers of tools that went away. nil means every name is
	// known, and nothing is ever dropped.
	Known func(tool string) bool
}

// Shared is the seam for breakers across replicas: what a Set needs of a
// store that other replicas' Sets share. An opening anywhere opens the
// tool's breaker everywhere for the rest of its cool-down; counts stay per
// replica, so the hot path (Allow and Record on a closed breaker) never
// leaves the process. Implementations must be safe for concurrent use.
type Shared interface {
	// Opened says tool's breaker opened here for cooldown. It must not
	// block: publish in the background.
	Opened(tool string, cooldown time.Duration)
	// Remaining says how much longer tool's breaker is open on any
	// replica (0 when on none); it may block for a bounded time, and an
	// error means "unknown" (the local state decides).
	Remaining(tool string) (time.Duration, error)
	// OnOpened registers f, to be called with a tool's name when another
	// replica may have opened that tool's breaker. A notice carries no
	// duration: whoever can send one need not be trusted, so the Set asks
	// Remaining and opens for what the shared state says, at most the
	// tool's own longest cool-down.
	OnOpened(f func(tool string))
}

// Set holds one Breaker per tool name, each created on first use, and,
// with SetOptions.Known, only for the tools served now. It is safe for
// concurrent use.
type Set struct {
	defaults Settings
	perTool  map[string]Settings // read-only after NewSet
	opts     SetOptions

	breakers sync.Map // tool name → *Breaker
	mu       sync.Mutex
}

// NewSet returns an empty Set. A tool's breaker takes each field from
// perTool[tool] where it is set (see Settings), else from defaults, else
// the package default. NewSet copies perTool.
func NewSet(defaults Settings, perTool map[string]Settings, opts SetOptions) *Set {
	s := &Set{defaults: defaults, perTool: make(map[string]Settings, len(perTool)), opts: opts}
	for tool, ts := range perTool {
		s.perTool[tool] = ts
	}
	if opts.Shared != nil {
		opts.Shared.OnOpened(s.opened)
	}
	return s
}

// opened is told that another replica may have opened tool's breaker. A
// tool this replica does not serve is ignored before anything is asked;
// for one it serves, the shared state decides: no opening there (no key
// in Redis), no opening here, and never for longer than the tool's own
// longest cool-down (an open breaker keeps the later end). Unlike a local
// opening, it is not shared again.
func (s *Set) opened(tool string) {
	if !s.known(tool) {
		return
	}
	d, err := s.opts.Shared.Remaining(tool)
	if err != nil || d <= 0 {
		return
	}
	s.For(tool).openFor(d)
}

func (s *Set) known(tool string) bool { return s.opts.Known == nil || s.opts.Known(tool) }

// Prune drops the breakers of the tools SetOptions.Known no longer
// reports and returns their names, sorted: call it when the tools served
// change. A call still running on a dropped breaker records against it;
// its transitions are no longer reported. Without Known it does nothing.
func (s *Set) Prune() []string {
	if s.opts.Known == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var gone []string
	s.breakers.Range(func(k, _ any) bool {
		if tool := k.(string); !s.opts.Known(tool) {
			s.breakers.Delete(tool)
			gone = append(gone, tool)
		}
		return true
	})
	slices.Sort(gone)
	return gone
}

// Len is how many breakers the Set holds.
func (s *Set) Len() int {
	n := 0
	s.breakers.Range(func(_, _ any) bool { n++; return true })
	return n
}

// toolPeer is a Shared seen by one tool's breaker.
type toolPeer struct {
	shared Shared
	tool   string
}

func (p toolPeer) Opened(d time.Duration)            { p.shared.Opened(p.tool, d) }
func (p toolPeer) Remaining() (time.Duration, error) { return p.shared.Remaining(p.tool) }

// For returns tool's breaker, creating it on the first call for that name.
// A tool that SetOptions.Known does not report (it went away between a
// caller's lookup and this call) gets a new breaker that is not kept.
func (s *Set) For(tool string) *Breaker {
	if b, ok := s.breakers.Load(tool); ok {
		return b.(*Breaker)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if b, ok := s.breakers.Load(tool); ok {
		return b.(*Breaker)
	}
	opts := Options{Rand: s.opts.Rand}
	if s.opts.Shared != nil {
		opts.Peer = toolPeer{s.opts.Shared, tool}
	}
	var b *Breaker
	if f := s.opts.OnChange; f != nil {
		opts.OnChange = func(from, to State) {
			// Only the breaker the Set holds reports: a dropped one's
			// transitions would bring back the series of a tool that
			// went away.
			if cur, ok := s.breakers.Load(tool); ok && cur.(*Breaker) == b {
				f(tool, from, to)
			}
		}
	}
	b = New(merge(s.perTool[tool], s.defaults), opts)
	if s.known(tool) {
		s.breakers.Store(tool, b)
	}
	return b
}

// merge fills o's unset fields from d: non-positive counts, rates and
// durations, and a zero Jitter (a negative one, "no jitter", is kept).
func merge(o, d Settings) Settings {
	if o.Failures <= 0 {
		o.Failures = d.Failures
	}
	if !(o.FailureRate > 0) {
		o.FailureRate = d.FailureRate
	}
	if o.MinCalls <= 0 {
		o.MinCalls = d.MinCalls
	}
	if o.Window <= 0 {
		o.Window = d.Window
	}
	if o.Cooldown <= 0 {
		o.Cooldown = d.Cooldown
	}
	if o.Jitter == 0 {
		o.Jitter = d.Jitter
	}
	if o.Probes <= 0 {
		o.Probes = d.Probes
	}
	return o
}

// Status is one breaker as a console shows it.
type Status struct {
	Tool  string
	State State
	// RetryAt is when an open breaker admits probes again; zero when it
	// is not open.
	RetryAt time.Time
	// Calls and Failures are counted over the last Window while the
	// breaker is closed (zero otherwise): it opens when Failures reach
	// FailureRate of Calls, once Calls are at least MinCalls.
	Calls, Failures int64
	// Settings are the breaker's thresholds, with defaults applied.
	Settings Settings
}

// Statuses returns the state of every breaker the Set holds, sorted by
// tool name. A tool that has not been called since it was served has no
// breaker yet (it is closed).
func (s *Set) Statuses() []Status {
	var out []Status
	s.breakers.Range(func(k, v any) bool {
		b := v.(*Breaker)
		calls, fails := b.Window()
		out = append(out, Status{Tool: k.(string), State: b.State(), RetryAt: b.RetryAt(),
			Calls: calls, Failures: fails, Settings: b.Settings()})
		return true
	})
	slices.SortFunc(out, func(a, b Status) int { return strings.Compare(a.Tool, b.Tool) })
	return out
}
