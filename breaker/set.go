package breaker

import (
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
	// OnOpened registers f, to be called when another replica opened
	// tool's breaker for cooldown (what remains of it).
	OnOpened(f func(tool string, cooldown time.Duration))
}

// Set holds one Breaker per tool name, each created on first use. It is safe
// for concurrent use.
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
		opts.Shared.OnOpened(s.Open)
	}
	return s
}

// Open opens tool's breaker for cooldown because another replica opened
// it (an open breaker keeps the later end); unlike a local opening, it is
// not shared again.
func (s *Set) Open(tool string, cooldown time.Duration) { s.For(tool).openFor(cooldown) }

// toolPeer is a Shared seen by one tool's breaker.
type toolPeer struct {
	shared Shared
	tool   string
}

func (p toolPeer) Opened(d time.Duration)            { p.shared.Opened(p.tool, d) }
func (p toolPeer) Remaining() (time.Duration, error) { return p.shared.Remaining(p.tool) }

// For returns tool's breaker, creating it on the first call for that name.
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
	if f := s.opts.OnChange; f != nil {
		opts.OnChange = func(from, to State) { f(tool, from, to) }
	}
	b := New(merge(s.perTool[tool], s.defaults), opts)
	s.breakers.Store(tool, b)
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
