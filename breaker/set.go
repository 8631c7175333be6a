package breaker

import "sync"

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
	return s
}

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
