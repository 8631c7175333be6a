// Package breaker is a per-tool circuit breaker.
//
// A Breaker has three states:
//
//	closed ──failure rate ≥ FailureRate of ≥ MinCalls calls within Window,
//	         or Failures consecutive failures with fewer calls──▶ open
//	open ──cool-down passed (checked lazily)──▶ half_open
//	half_open ──any probe fails──▶ open (a new cool-down)
//	half_open ──Probes probes succeed──▶ closed (failures forgotten)
//
// A breaker trips on its tool's failure rate, not on a count: at high
// traffic a handful of failures is noise (five slow attempts among a
// thousand calls a second say nothing of a tool's health), at low traffic a
// rate is meaningless, so a run of consecutive failures trips it instead.
//
// A call asks Allow for a Ticket before it runs and hands the ticket back to
// Record with its Outcome when it ends. The caller classifies outcomes: this
// package knows nothing of error kinds. Only Failure counts against a tool;
// Ignore is for results that say nothing about its health (bad input, a
// spent budget, a caller that went away).
//
// Every transition starts a new generation, and a ticket belongs to the
// generation that issued it: results of calls that started before a state
// change are ignored, and they never free a probe slot of a later half-open
// period.
//
// Closed, the breaker counts calls and failures in Window/10 buckets of
// atomic words: Allow and Record take no lock unless the breaker trips.
// Time is read from the time package when a method is called; there are no
// timers or goroutines. Under testing/synctest the clock is the bubble's.
//
// Across replicas, a Set given a Shared (SetOptions.Shared) shares its
// breakers' openings, never their counts: a breaker that opens tells the
// Shared, one whose cool-down ends asks it once before its first probe,
// and a notice of an opening elsewhere makes the Set ask it too. What the
// Shared answers is capped at the tool's own longest cool-down, and a
// notice for a tool the Set does not serve (SetOptions.Known) is ignored.
// Without one, the default, nothing leaves the process.
//
// The intended use, once per attempt of a call:
//
//	t, ok := b.Allow()
//	if !ok {
//		// fail at once with circuit_open; do not sleep and retry
//	}
//	err := run()
//	b.Record(t, classify(err))
package breaker

import (
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// Defaults for the zero fields of Settings.
const (
	DefaultFailures    = 5
	DefaultFailureRate = 0.5
	DefaultMinCalls    = 20
	DefaultWindow      = 30 * time.Second
	DefaultCooldown    = 30 * time.Second
	DefaultJitter      = 0.2
	DefaultProbes      = 1
)

// Settings configure a Breaker. The zero value of each field means its
// default.
type Settings struct {
	// Failures is how many consecutive failures open the breaker while
	// the window holds fewer than MinCalls calls (low traffic); a success
	// starts the run again. ≤ 0 means DefaultFailures (5).
	Failures int
	// FailureRate is the fraction of the window's calls that, once they
	// are at least MinCalls, opens the breaker when that many or more
	// failed. ≤ 0 (or NaN) means DefaultFailureRate (0.5); above 1, only
	// the consecutive-failure rule can open it.
	FailureRate float64
	// MinCalls is the fewest calls in the window for FailureRate to
	// apply. ≤ 0 means DefaultMinCalls (20).
	MinCalls int
	// Window is the sliding window calls and failures are counted in. It
	// slides in steps of Window/10: a call counts for between 0.9 and 1
	// Window. ≤ 0 means DefaultWindow (30 s).
	Window time.Duration
	// Cooldown is how long the breaker stays open before it admits probes;
	// the actual cool-down is Cooldown × (1 + U[0, Jitter)), drawn anew on
	// each opening. ≤ 0 means DefaultCooldown (30 s).
	Cooldown time.Duration
	// Jitter spreads cool-downs; 0 means DefaultJitter (0.2), a negative
	// value means no jitter.
	Jitter float64
	// Probes is how many calls half-open admits. A probe that succeeds
	// keeps its slot, one recorded as Ignore gives it back, so at most
	// Probes tickets are outstanding and Probes successes close the
	// breaker. ≤ 0 means DefaultProbes (1).
	Probes int
}

// State is a breaker's state.
type State int

// The states of a Breaker.
const (
	Closed State = iota
	Open
	HalfOpen
)

// String returns "closed", "open" or "half_open".
func (s State) String() string {
	switch s {
	case Closed:
		return "closed"
	case Open:
		return "open"
	case HalfOpen:
		return "half_open"
	}
	return "State(" + strconv.Itoa(int(s)) + ")"
}

// Outcome is the caller's verdict on a call, given to Record.
type Outcome int

// The outcomes of a call. Values other than these are treated as Ignore.
const (
	// Success: the tool answered. It counts as a call in the window and
	// ends a run of consecutive failures; a probe's success counts towards
	// closing the breaker.
	Success Outcome = iota
	// Failure counts against the tool (a timeout, a transient or internal
	// error). A probe's failure reopens the breaker.
	Failure
	// Ignore releases the ticket without counting: a probe's slot is
	// freed for another call.
	Ignore
)

// String returns "success", "failure" or "ignore".
func (o Outcome) String() string {
	switch o {
	case Success:
		return "success"
	case Failure:
		return "failure"
	case Ignore:
		return "ignore"
	}
	return "Outcome(" + strconv.Itoa(int(o)) + ")"
}

// Ticket is a breaker's admission of one call, returned by Allow and given
// back to Record. It is a small value; copy it freely. The zero Ticket is
// never current: recording it does nothing.
type Ticket struct {
	gen   uint64 // the generation that issued it; generations start at 1
	probe bool   // issued in half-open: holds a probe slot
}

// Probe reports whether t was issued by a half-open breaker.
func (t Ticket) Probe() bool { return t.probe }

// Options are a Breaker's hooks; the zero value is usable.
type Options struct {
	// Rand returns draws from U[0,1) for the cool-down jitter; nil means
	// math/rand/v2's Float64. It is called with the breaker's lock held:
	// it must not call the Breaker.
	Rand func() float64
	// OnChange, if not nil, is told of every transition. It is called
	// without the breaker's lock held, so it may call the Breaker; calls
	// are serialized and in the order of the transitions, but one may
	// come from a goroutine other than the one that caused it, shortly
	// after that goroutine's method returned.
	OnChange func(from, to State)
	// Peer, if not nil, shares this breaker's openings with other
	// replicas (see Peer); nil means the breaker decides alone.
	Peer Peer
}

// Peer shares one breaker's openings with the same tool's breakers on
// other replicas. Only openings are shared: counts stay with each replica,
// so Allow and Record never wait on a peer. A Breaker tells its peer each
// time it opens, and asks it once when a cool-down ends, before the first
// probe: an opening elsewhere then extends the local cool-down, by at
// most the breaker's longest cool-down. Notices of openings elsewhere
// reach the breaker through its Set. Implementations must be safe for
// concurrent use.
type Peer interface {
	// Opened says the breaker opened here for cooldown. It is called
	// without the breaker's lock held and must not block: publish in the
	// background.
	Opened(cooldown time.Duration)
	// Remaining says how much longer the breaker is open on any replica
	// (0 when on none). It may block, for a bounded time; an error means
	// "unknown", and the local state decides.
	Remaining() (time.Duration, error)
}

// Breaker is one tool's circuit breaker. It is safe for concurrent use.
// Create it with New; the zero value is not usable.
type Breaker struct {
	s        Settings // with defaults applied; immutable
	rand     func() float64
	onChange func(from, to State)
	peer     Peer
	base     time.Time // times are nanoseconds since base (monotonic)

	// Written under mu, read anywhere: the fast paths of Allow, Record
	// and State use these without the lock.
	word      atomic.Uint64 // generation<<2 | state
	openUntil atomic.Int64  // when an open breaker admits probes
	win       window        // closed: calls and failures in Window
	run       atomic.Int64  // closed: consecutive failures
	asking    atomic.Bool   // a goroutine is asking the peer at the end of a cool-down

	mu sync.Mutex
	m  machine // guarded by mu
}

// New returns a closed Breaker with settings s.
func New(s Settings, opts Options) *Breaker {
	b := &Breaker{s: s.withDefaults(), rand: opts.Rand, onChange: opts.OnChange, peer: opts.Peer, base: time.Now()}
	if b.rand == nil {
		b.rand = defaultRand
	}
	b.m.init()
	b.win.init(int64(b.s.Window))
	b.publish()
	return b
}

// Allow asks to run one call. It returns false when the breaker is open, or
// half-open with every probe slot taken: the caller should fail at once
// (circuit_open). When it returns true, the caller must pass the ticket to
// Record once the call ends; in half-open the ticket holds a probe slot
// until then.
func (b *Breaker) Allow() (Ticket, bool) {
	w := b.word.Load()
	switch State(w & stateMask) {
	case Closed:
		return Ticket{gen: w >> genShift}, true
	case Open:
		if b.now() < b.openUntil.Load() || !b.mayLeaveOpen() {
			return Ticket{}, false
		}
	}
	return b.allowSlow()
}

// Record reports how the call admitted by t ended; call it once per ticket.
// Tickets issued before the latest transition are ignored: their results do
// not count and they free no probe slot.
func (b *Breaker) Record(t Ticket, o Outcome) {
	if t.gen != b.word.Load()>>genShift {
		return // stale: generations only grow
	}
	if t.probe {
		b.recordSlow(t, o)
		return
	}
	// A current ticket that is not a probe was issued by a closed
	// breaker, which counts without its lock.
	if o != Success && o != Failure {
		return
	}
	now := b.now()
	b.win.add(now, o == Failure)
	if o == Success {
		if b.run.Load() != 0 { // no write to a shared line when there is no run
			b.run.Store(0)
		}
		return
	}
	if b.tripping(now, b.run.Add(1)) {
		b.recordSlow(t, o)
	}
}

// tripping applies the rule to a closed breaker that just counted a
// failure, run long: the rate when the window holds MinCalls calls or
// more, else the run of consecutive failures.
func (b *Breaker) tripping(now, run int64) bool {
	calls, fails := b.win.sum(now)
	if calls >= int64(b.s.MinCalls) {
		return float64(fails) >= b.s.FailureRate*float64(calls)
	}
	return run >= int64(b.s.Failures)
}

// State returns the breaker's state, first moving an open breaker whose
// cool-down has passed to half-open.
func (b *Breaker) State() State {
	s := State(b.word.Load() & stateMask)
	if s != Open || b.now() < b.openUntil.Load() {
		return s
	}
	if !b.mayLeaveOpen() {
		return Open
	}
	b.mu.Lock()
	b.advance(b.now())
	s = b.m.state
	b.unlockAndNotify()
	return s
}

// Settings returns the settings b runs with, every default applied.
func (b *Breaker) Settings() Settings { return b.s }

// Window returns the calls and failures counted over the last Window
// while the breaker is closed; an open or half-open breaker counts none.
func (b *Breaker) Window() (calls, failures int64) {
	if b.State() != Closed {
		return 0, 0
	}
	return b.win.sum(b.now())
}

// RetryAt returns when an open breaker will admit probes, or the zero time
// if it is not open (after the lazy move to half-open State describes).
func (b *Breaker) RetryAt() time.Time {
	if b.State() != Open {
		return time.Time{}
	}
	return b.base.Add(time.Duration(b.openUntil.Load()))
}
