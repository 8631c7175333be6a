package breaker

import (
	"math"
	"math/rand/v2"
	"time"
)

// The atomic word packs the generation above the state.
const (
	genShift  = 2
	stateMask = 1<<genShift - 1
)

var defaultRand = rand.Float64

// machine is a Breaker's mutable state, guarded by Breaker.mu.
type machine struct {
	state State
	gen   uint64

	// Half-open: probe slots outstanding and probes that succeeded.
	probesOut int
	probesOK  int

	// Transitions not yet given to OnChange, from head on.
	pending   []change
	head      int
	notifying bool // a goroutine is delivering pending
}

// change is a transition to deliver; share > 0 marks a local opening
// for that cool-down, which the peer is told of.
type change struct {
	from, to State
	share    time.Duration
}

func (m *machine) init() {
	m.gen = 1 // the zero Ticket is never current
}

func (s Settings) withDefaults() Settings {
	if s.Failures <= 0 {
		s.Failures = DefaultFailures
	}
	if !(s.FailureRate > 0) {
		s.FailureRate = DefaultFailureRate
	}
	if s.MinCalls <= 0 {
		s.MinCalls = DefaultMinCalls
	}
	if s.Window <= 0 {
		s.Window = DefaultWindow
	}
	if s.Cooldown <= 0 {
		s.Cooldown = DefaultCooldown
	}
	if s.Jitter == 0 {
		s.Jitter = DefaultJitter
	}
	if s.Probes <= 0 {
		s.Probes = DefaultProbes
	}
	return s
}

// now is the time since b.base, on the monotonic clock.
func (b *Breaker) now() int64 { return int64(time.Since(b.base)) }

// publish makes the state and generation visible to the lock-free paths.
// Callers hold mu (or own b exclusively).
func (b *Breaker) publish() {
	b.word.Store(b.m.gen<<genShift | uint64(b.m.state))
}

func (b *Breaker) allowSlow() (Ticket, bool) {
	b.mu.Lock()
	b.advance(b.now())
	var t Ticket
	ok := false
	switch m := &b.m; m.state {
	case Closed: // it closed between the fast path and the lock
		t, ok = Ticket{gen: m.gen}, true
	case HalfOpen:
		if m.probesOut+m.probesOK < b.s.Probes {
			m.probesOut++
			t, ok = Ticket{gen: m.gen, probe: true}, true
		}
	}
	b.unlockAndNotify()
	return t, ok
}

func (b *Breaker) recordSlow(t Ticket, o Outcome) {
	b.mu.Lock()
	// A current ticket was issued in the current state: a probe in
	// half-open, any other in closed.
	if m := &b.m; t.gen == m.gen {
		now := b.now()
		switch {
		case o == Failure && t.probe:
			b.trip(now)
		case o == Failure:
			b.trip(now) // Record found the rule met
		case o == Success:
			m.probesOut--
			m.probesOK++
			if m.probesOK >= b.s.Probes {
				b.transition(Closed)
			}
		default: // Ignore, or an unknown outcome, on a probe
			m.probesOut--
		}
	}
	b.unlockAndNotify()
}

// trip opens the breaker for a fresh, jittered cool-down.
func (b *Breaker) trip(now int64) {
	d := float64(b.s.Cooldown)
	if b.s.Jitter > 0 {
		d += d * b.s.Jitter * b.rand()
	}
	// Saturated, not wrapped: an operator's cool-down of years must not
	// end in the past.
	until := int64(math.MaxInt64)
	if d < float64(math.MaxInt64-now) {
		until = now + int64(d)
	}
	// Stored before the state is published, so a reader that sees Open
	// sees this cool-down or a later one.
	b.openUntil.Store(until)
	b.transition(Open)
	if b.peer != nil {
		b.m.pending[len(b.m.pending)-1].share = time.Duration(until - now)
	}
}

// openFor opens the breaker for d because another replica opened it: the
// peer is not told again. d is what the shared state says, which whoever
// can write it chooses: it is cut to the longest cool-down this breaker
// would draw itself. An open breaker keeps the later of its own cool-down
// and d.
func (b *Breaker) openFor(d time.Duration) {
	if d <= 0 {
		return
	}
	d = min(d, b.longest())
	b.mu.Lock()
	now := b.now()
	until := int64(math.MaxInt64)
	if d < time.Duration(math.MaxInt64-now) {
		until = now + int64(d)
	}
	if b.m.state != Open {
		b.openUntil.Store(until)
		b.transition(Open)
	} else if until > b.openUntil.Load() {
		b.openUntil.Store(until)
	}
	b.unlockAndNotify()
}

// longest is the longest cool-down trip draws: Cooldown × (1 + Jitter),
// saturated.
func (b *Breaker) longest() time.Duration {
	d := float64(b.s.Cooldown)
	if b.s.Jitter > 0 {
		d += d * b.s.Jitter
	}
	if d >= math.MaxInt64 {
		return math.MaxInt64
	}
	return time.Duration(d)
}

// mayLeaveOpen is asked when an open breaker's cool-down has passed: with
// a peer, one goroutine asks it whether another replica still holds the
// breaker open, and if so the local cool-down is extended to match.
// Callers that come while it asks are refused, as the breaker is still
// open until it knows. Without a peer, or when the peer cannot answer,
// the local cool-down decides.
func (b *Breaker) mayLeaveOpen() bool {
	if b.peer == nil {
		return true
	}
	if !b.asking.CompareAndSwap(false, true) {
		return false
	}
	defer b.asking.Store(false)
	d, err := b.peer.Remaining()
	if err != nil || d <= 0 {
		return true
	}
	b.openFor(d)
	return false
}

// advance moves an open breaker whose cool-down has passed to half-open.
func (b *Breaker) advance(now int64) {
	if b.m.state == Open && now >= b.openUntil.Load() {
		b.transition(HalfOpen)
	}
}

// transition enters state to with a new generation and a clean slate, and
// queues the change for OnChange.
func (b *Breaker) transition(to State) {
	m := &b.m
	from := m.state
	m.state = to
	m.gen++
	m.probesOut, m.probesOK = 0, 0
	if to == Closed { // a clean slate: what happened before it opened is over
		b.win.reset()
		b.run.Store(0)
	}
	b.publish()
	if b.onChange != nil || b.peer != nil {
		m.pending = append(m.pending, change{from: from, to: to})
	}
}

// unlockAndNotify releases mu and delivers queued transitions to OnChange
// (and local openings to the peer), unless another goroutine is already
// delivering them: that one then delivers ours too, so changes reach
// OnChange one at a time and in order, never under mu.
func (b *Breaker) unlockAndNotify() {
	m := &b.m
	if m.notifying || m.head == len(m.pending) {
		b.mu.Unlock()
		return
	}
	m.notifying = true
	done := false
	defer func() {
		if !done { // OnChange panicked: let the next caller deliver
			b.mu.Lock()
			m.notifying = false
			b.mu.Unlock()
		}
	}()
	for m.head < len(m.pending) {
		c := m.pending[m.head]
		m.head++
		b.mu.Unlock()
		if c.share > 0 {
			b.peer.Opened(c.share)
		}
		if b.onChange != nil {
			b.onChange(c.from, c.to)
		}
		b.mu.Lock()
	}
	m.pending, m.head = m.pending[:0], 0
	m.notifying = false
	b.mu.Unlock()
	done = true
}
