// Package kick wakes the Go scheduler at the deadlines of calls running
// guest code (see Kicker). It is host's alone: only the sandbox call uses it.
package kick

import (
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// Kicker wakes the Go scheduler at the deadlines of calls running guest
// code, so a deadline stops a spinning guest within a fraction of a
// millisecond instead of several.
//
// Why the Go runtime alone is late (make lateness; the trace is in
// docs/BENCHMARKS.md): a call's deadline is a runtime timer on the P whose
// goroutine created it, and that goroutine is then inside the guest's
// native code, which never enters the scheduler. The timer fires when
// another P looks at it: an idle P's thread asleep in the network poller,
// whose timeout has millisecond granularity and did not always account for
// that timer, or sysmon, which sleeps up to 10 ms when the process is
// idle. Measured: the timer fired 1.5–4 ms late for about one spinning
// call in twenty, with nothing else running on any P.
//
// The kicker's own thread sleeps until the earliest registered deadline
// with a nanosecond-resolution alarm (ppoll on Linux), then parks briefly:
// its P, with nothing of its own to run, looks at every P's timers, and
// the call's context timer fires there, on time. It then yields once
// before it sleeps again, so that the goroutines the timer started (the
// context's cancel, wazero's close) run first: a goroutine blocked in a
// system call keeps its P, and what is queued on that P waits until sysmon
// takes the P back, up to 10 ms later. With no deadline registered it
// parks on a channel instead, holding no P. It changes nothing about
// what a deadline means — the context still ends by its own timer, and
// the guest still stops through wazero's close-on-context-done — it only
// makes the runtime look when the timer is due. Without an alarm (not
// Linux) it does nothing.
//
// A Kicker is safe for concurrent use; a nil *Kicker registers nothing.
type Kicker struct {
	alarm alarm

	mu      sync.Mutex
	pending map[*time.Time]struct{} // deadlines of calls in guest code
	target  time.Time               // what the alarm sleeps until; zero: no deadline
	closed  bool
	added   chan struct{} // wakes a kicker parked with no deadline
	done    chan struct{}

	kicks  atomic.Uint64 // deadlines that passed with their call still registered
	kicked func()        // tests: called after each kick
}

// alarm is a sleep with a precise timeout that another goroutine can cut
// short.
type alarm interface {
	// sleep returns after d, or earlier once interrupt is called.
	sleep(d time.Duration)
	interrupt()
	close()
}

// kickPark is how long the kicker parks after a deadline passes: long
// enough that its own wake-up is not due when its P next looks at timers.
const kickPark = 50 * time.Microsecond

// New starts a kicker, or returns nil where there is no alarm.
func New() *Kicker {
	a := newAlarm()
	if a == nil {
		return nil
	}
	return start(a, nil)
}

// start runs a kicker on a; kicked, if set, is called after each kick.
func start(a alarm, kicked func()) *Kicker {
	k := &Kicker{alarm: a, pending: map[*time.Time]struct{}{}, added: make(chan struct{}, 1), done: make(chan struct{}), kicked: kicked}
	go k.run()
	return k
}

// Deadline is a deadline Add registered, for Remove. The zero value is
// none.
type Deadline struct{ d *time.Time }

// Add registers a call's deadline until Remove is called with what it
// returns. Nil-safe: with no kicker it registers nothing.
func (k *Kicker) Add(deadline time.Time) Deadline {
	if k == nil {
		return Deadline{}
	}
	d := &deadline
	k.mu.Lock()
	defer k.mu.Unlock()
	k.pending[d] = struct{}{}
	switch {
	case k.closed:
	case k.target.IsZero(): // parked with no deadline
		select {
		case k.added <- struct{}{}:
		default: // a wake-up is already pending
		}
	case deadline.Before(k.target):
		// Under mu: close cannot have closed the alarm's descriptor (a
		// write to a closed, perhaps reused, descriptor would go astray).
		k.alarm.interrupt()
	}
	return Deadline{d}
}

// Remove forgets a deadline Add registered (zero: nothing). A deadline
// the kicker already kicked is gone already.
func (k *Kicker) Remove(d Deadline) {
	if d.d == nil {
		return
	}
	k.mu.Lock()
	delete(k.pending, d.d)
	k.mu.Unlock()
}

// Pending counts the deadlines registered and not yet kicked or removed.
// Nil-safe.
func (k *Kicker) Pending() int {
	if k == nil {
		return 0
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	return len(k.pending)
}

func (k *Kicker) run() {
	defer close(k.done)
	for {
		k.mu.Lock()
		if k.closed {
			k.mu.Unlock()
			return
		}
		next := k.earliest()
		k.target = next
		k.mu.Unlock()
		if next.IsZero() {
			<-k.added
			continue
		}
		if wait := time.Until(next); wait > 0 {
			k.alarm.sleep(wait)
		}
		if k.due() {
			k.kicks.Add(1)
			time.Sleep(kickPark)
			runtime.Gosched()
			if k.kicked != nil {
				k.kicked()
			}
		}
	}
}

// earliest is the first pending deadline, or zero. Calls hold k.mu.
func (k *Kicker) earliest() time.Time {
	var first time.Time
	for d := range k.pending {
		if first.IsZero() || d.Before(first) {
			first = *d
		}
	}
	return first
}

// due drops the deadlines that have passed and reports whether there were
// any: a wake-up for a call that already ended kicks nothing.
func (k *Kicker) due() bool {
	now := time.Now()
	k.mu.Lock()
	defer k.mu.Unlock()
	passed := false
	for d := range k.pending {
		if !d.After(now) {
			delete(k.pending, d)
			passed = true
		}
	}
	return passed
}

// Close stops the kicker and waits for its goroutine. Nil-safe.
func (k *Kicker) Close() {
	if k == nil {
		return
	}
	k.mu.Lock()
	k.closed = true
	k.alarm.interrupt()
	k.mu.Unlock()
	select {
	case k.added <- struct{}{}:
	default:
	}
	<-k.done
	k.mu.Lock() // add looks at closed under mu before it interrupts
	k.alarm.close()
	k.mu.Unlock()
}
