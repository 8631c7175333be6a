package breaker

import (
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

// fleetShared links the Sets of one process as if they were replicas: an
// opening on one is announced to the others (unless deliver is off, a
// lost publication), and Remaining answers from the latest end of any
// opening, on the bubble's clock. It is the in-process stand-in for
// breaker/redisstore, whose own tests run against a real Redis.
type fleetShared struct {
	mu      sync.Mutex
	until   map[string]time.Time
	members []*fleetMember
	deliver bool
	err     error // Remaining's answer when set
	asks    atomic.Int32
	gate    chan struct{} // when set, Remaining waits for it
}

type fleetMember struct {
	f      *fleetShared
	onOpen func(tool string)
	opened atomic.Int32
}

func newFleetShared() *fleetShared {
	return &fleetShared{until: map[string]time.Time{}, deliver: true}
}

func (f *fleetShared) member() *fleetMember {
	m := &fleetMember{f: f}
	f.mu.Lock()
	f.members = append(f.members, m)
	f.mu.Unlock()
	return m
}

func (m *fleetMember) Opened(tool string, d time.Duration) {
	m.opened.Add(1)
	f := m.f
	f.mu.Lock()
	if end := time.Now().Add(d); end.After(f.until[tool]) {
		f.until[tool] = end
	}
	var others []*fleetMember
	if f.deliver {
		for _, o := range f.members {
			if o != m {
				others = append(others, o)
			}
		}
	}
	f.mu.Unlock()
	for _, o := range others {
		o.onOpen(tool)
	}
}

func (m *fleetMember) Remaining(tool string) (time.Duration, error) {
	f := m.f
	f.asks.Add(1)
	if f.gate != nil {
		<-f.gate
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.err != nil {
		return 0, f.err
	}
	return max(time.Until(f.until[tool]), 0), nil
}

func (m *fleetMember) OnOpened(fn func(tool string)) { m.onOpen = fn }

func trip(t *testing.T, b *Breaker, failures int) {
	t.Helper()
	for range failures {
		tk, ok := b.Allow()
		if !ok {
			t.Fatal("a closed breaker refused a call")
		}
		b.Record(tk, Failure)
	}
}

// An opening on one replica opens the tool everywhere for the rest of its
// cool-down; the others do not publish it again, and their counts stay
// their own.
func TestSharedOpensEverywhere(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFleetShared()
		var changes []string
		var mu sync.Mutex
		settings := Settings{Failures: 2, Cooldown: time.Minute, Jitter: -1}
		mA, mB := f.member(), f.member()
		a := NewSet(settings, nil, SetOptions{Shared: mA})
		b := NewSet(settings, nil, SetOptions{Shared: mB, OnChange: func(tool string, from, to State) {
			mu.Lock()
			changes = append(changes, tool+" "+from.String()+"→"+to.String())
			mu.Unlock()
		}})
		trip(t, b.For("other"), 1) // one failure on B: not enough, and not shared
		trip(t, a.For("t"), 2)
		if st := b.For("t").State(); st != Open {
			t.Fatalf("B's breaker after A opened: %v, want open", st)
		}
		if _, ok := b.For("t").Allow(); ok {
			t.Fatal("B admitted a call while A's breaker is open")
		}
		if got, want := b.For("t").RetryAt(), a.For("t").RetryAt(); !got.Equal(want) {
			t.Fatalf("B retries at %v, A at %v: the cool-down must be the same", got, want)
		}
		if n := mA.opened.Load() + mB.opened.Load(); n != 1 {
			t.Fatalf("%d publications of one opening, want 1 (B must not echo it)", n)
		}
		if st := b.For("other").State(); st != Closed {
			t.Fatalf("B's own tool: %v, want closed", st)
		}
		mu.Lock()
		if len(changes) != 1 || changes[0] != "t closed→open" {
			t.Fatalf("B's transitions %q, want one closed→open for t", changes)
		}
		mu.Unlock()
		time.Sleep(time.Minute)
		for name, s := range map[string]*Set{"A": a, "B": b} {
			if st := s.For("t").State(); st != HalfOpen {
				t.Fatalf("%s after the cool-down: %v, want half_open", name, st)
			}
		}
	})
}

// A replica that missed an opening (its publication was lost) reads the
// shared state when its own cool-down ends, before its first probe, and
// stays open as long as the other replica does.
func TestSharedReadOnProbe(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFleetShared()
		settings := Settings{Failures: 1, Cooldown: time.Minute, Jitter: -1}
		a := NewSet(settings, nil, SetOptions{Shared: f.member()})
		b := NewSet(settings, nil, SetOptions{Shared: f.member()})
		f.deliver = false
		trip(t, b.For("t"), 1) // until 1m
		time.Sleep(30 * time.Second)
		trip(t, a.For("t"), 1) // until 1m30s; B did not hear of it
		time.Sleep(30 * time.Second)
		if _, ok := b.For("t").Allow(); ok {
			t.Fatal("B admitted a probe while A's breaker is open")
		}
		if got := f.asks.Load(); got != 1 {
			t.Fatalf("B asked %d times, want once", got)
		}
		if got, want := b.For("t").RetryAt(), a.For("t").RetryAt(); !got.Equal(want) {
			t.Fatalf("B retries at %v, A at %v", got, want)
		}
		time.Sleep(30 * time.Second)
		if _, ok := b.For("t").Allow(); !ok {
			t.Fatal("B refused its probe after every cool-down ended")
		}
	})
}

// When the shared state cannot be read, the local cool-down decides.
func TestSharedUnknownFallsBackToLocal(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFleetShared()
		f.err = errors.New("redis unavailable")
		b := NewSet(Settings{Failures: 1, Cooldown: time.Minute, Jitter: -1}, nil, SetOptions{Shared: f.member()})
		trip(t, b.For("t"), 1)
		time.Sleep(time.Minute)
		tk, ok := b.For("t").Allow()
		if !ok || !tk.Probe() {
			t.Fatalf("Allow after the cool-down with the shared state unknown: %v %v, want a probe", tk, ok)
		}
	})
}

// One goroutine asks at the end of a cool-down; calls that come while it
// asks are refused, not sent to ask too.
func TestSharedOneAskAtATime(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFleetShared()
		f.gate = make(chan struct{})
		b := NewSet(Settings{Failures: 1, Cooldown: time.Minute, Jitter: -1}, nil, SetOptions{Shared: f.member()}).For("t")
		trip(t, b, 1)
		time.Sleep(time.Minute)
		first := make(chan bool)
		go func() {
			_, ok := b.Allow()
			first <- ok
		}()
		synctest.Wait() // the first caller is blocked in Remaining
		for range 10 {
			if _, ok := b.Allow(); ok {
				t.Fatal("a call was admitted while the shared state was being read")
			}
			if st := b.State(); st != Open {
				t.Fatalf("State while reading: %v, want open", st)
			}
		}
		close(f.gate)
		if !<-first {
			t.Fatal("the asking caller was refused although no replica holds the breaker open")
		}
		if got := f.asks.Load(); got != 1 {
			t.Fatalf("%d reads of the shared state, want 1", got)
		}
	})
}

// Two replicas' breakers under fire: goroutines on each record outcomes
// (some failures, so both open and re-open), deliver each other's
// openings, and ask at the ends of cool-downs, all at once. Run under
// -race: the shared paths take the same locks as local ones; at the end,
// an opening on one still refuses on the other.
func TestHammerShared(t *testing.T) {
	f := newFleetShared()
	settings := Settings{Failures: 3, Cooldown: 10 * time.Millisecond, Jitter: -1, Probes: 2}
	sets := []*Set{
		NewSet(settings, nil, SetOptions{Shared: f.member()}),
		NewSet(settings, nil, SetOptions{Shared: f.member()}),
	}
	var admitted, refused atomic.Int64
	hammer(t, 16, 2000, func(g, i int) {
		b := sets[g%2].For("t")
		tk, ok := b.Allow()
		if !ok {
			refused.Add(1)
			return
		}
		admitted.Add(1)
		o := Success
		if (g+i)%8 < 5 { // over the default rate of one half
			o = Failure
		}
		b.Record(tk, o)
	})
	if admitted.Load() == 0 || refused.Load() == 0 {
		t.Fatalf("admitted %d, refused %d: want some of each", admitted.Load(), refused.Load())
	}
	long := NewSet(Settings{Failures: 1, Cooldown: time.Hour, Jitter: -1}, nil, SetOptions{Shared: f.member()})
	trip(t, long.For("u"), 1)
	for i, s := range sets {
		if _, ok := s.For("u").Allow(); ok {
			t.Fatalf("replica %d admitted a call to a tool open elsewhere", i)
		}
	}
}

// A notice of an opening elsewhere is no order (issue 27 item 2): a tool
// this replica does not serve gets no breaker; a served tool opens only
// when the shared state says so, and for at most its own longest
// cool-down, whatever the shared state claims.
func TestSharedNoticeIsChecked(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFleetShared()
		m := f.member()
		served := map[string]bool{"t": true}
		var changes atomic.Int32
		set := NewSet(Settings{Failures: 1, Cooldown: time.Minute, Jitter: 0.5}, nil, SetOptions{Shared: m,
			Known:    func(tool string) bool { return served[tool] },
			OnChange: func(string, State, State) { changes.Add(1) }})

		m.onOpen("made-up") // unknown tool: nothing asked, nothing created
		if n, asks := set.Len(), f.asks.Load(); n != 0 || asks != 0 {
			t.Fatalf("a notice for a tool not served: %d breakers, %d reads of the shared state; want 0, 0", n, asks)
		}
		m.onOpen("t") // served, but nothing open in the shared state
		if st := set.For("t").State(); st != Closed || changes.Load() != 0 {
			t.Fatalf("a notice with no opening in the shared state: %v, %d transitions; want closed, 0", st, changes.Load())
		}
		f.mu.Lock()
		f.until["t"] = time.Now().Add(40 * 365 * 24 * time.Hour) // a forged opening until 2066
		f.mu.Unlock()
		m.onOpen("t")
		if got, want := time.Until(set.For("t").RetryAt()), 90*time.Second; got != want {
			t.Fatalf("opened for %v by a forged 40-year opening, want the tool's longest cool-down %v", got, want)
		}
		time.Sleep(90 * time.Second) // the cool-down ends; the shared state still says open
		if _, ok := set.For("t").Allow(); ok {
			t.Fatal("a probe was admitted while the shared state holds the tool open")
		}
		if got, want := time.Until(set.For("t").RetryAt()), 90*time.Second; got != want {
			t.Fatalf("re-read extended the cool-down by %v, want at most %v", got, want)
		}
	})
}

// Prune drops the breakers of tools no longer served, and a dropped
// breaker's transitions are not reported; For does not keep a breaker for
// a tool that is not served.
func TestPruneDropsGoneTools(t *testing.T) {
	served := map[string]bool{"a": true, "b": true}
	var mu sync.Mutex
	var reported []string
	set := NewSet(Settings{Failures: 1, Cooldown: time.Minute}, nil, SetOptions{
		Known: func(tool string) bool { mu.Lock(); defer mu.Unlock(); return served[tool] },
		OnChange: func(tool string, from, to State) {
			mu.Lock()
			reported = append(reported, tool)
			mu.Unlock()
		}})
	set.For("a")
	b := set.For("b")
	mu.Lock()
	delete(served, "b")
	mu.Unlock()
	if gone := set.Prune(); len(gone) != 1 || gone[0] != "b" {
		t.Fatalf("Prune = %q, want [b]", gone)
	}
	if set.Len() != 1 {
		t.Fatalf("%d breakers after Prune, want 1", set.Len())
	}
	trip(t, b, 1) // a call that was running on b when it went away
	if set.For("c"); set.Len() != 1 {
		t.Fatal("For kept a breaker for a tool that is not served")
	}
	mu.Lock()
	defer mu.Unlock()
	if len(reported) != 0 {
		t.Fatalf("transitions reported for dropped tools: %q", reported)
	}
}
