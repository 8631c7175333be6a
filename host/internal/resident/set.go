// Package resident keeps modules' compiled code in memory within a bound:
// a Code is one module's compiled code, compiled on demand when a call
// needs it and absent (not compiled yet, or released), shared by the
// instances made from it; a Set is the runtime's modules with code in
// memory, by last use, and the lifetime of the compiles it starts in the
// background. It is host's alone.
package resident

import (
	"cmp"
	"context"
	"slices"
	"sync"
	"sync/atomic"
)

// Set is the runtime's modules with compiled code in memory, by last use,
// kept within Max by releasing the idle ones used longest ago. It is safe
// for concurrent use.
type Set struct {
	max     int              // 0: no bound
	refuses func(error) bool // a compile error that refuses the module for good
	slots   chan struct{}    // warm-up compiles at once
	life    lifetime         // on-demand and warm-up compiles, ended by Close
	queued  atomic.Int64     // warm-ups waiting for a slot
	running atomic.Int64     // compiles in progress on demand
	dropped atomic.Uint64    // codes released under the bound

	mu   sync.Mutex
	seq  uint64           // last use's clock
	last map[*Code]uint64 // resident codes, by last use

	// Compiles by whether a call waits for them: calls is how many a call
	// waits for, callsDone closes when that falls to zero, and bg holds
	// those of background work that no call waits for, which a call's
	// compile stops (callWaitsLocked). Under mu.
	calls     int
	callsDone chan struct{}
	bg        map[*compiling]struct{}
}

// NewSet returns a set bounded at bound resident codes (0: no bound),
// warming up at most warming modules at once. A compile error for which
// refuses reports true refuses its module for good: later calls get the
// error without compiling again.
func NewSet(bound, warming int, refuses func(error) bool) *Set {
	return &Set{max: bound, refuses: refuses, slots: make(chan struct{}, max(1, warming)),
		life: newLifetime(), last: map[*Code]uint64{}, bg: map[*compiling]struct{}{}}
}

// Stats is what a set has done so far.
type Stats struct {
	// Compiling is the compiles in progress on demand; Queued the
	// warm-ups waiting for a slot.
	Compiling, Queued int64
	// Resident is how many codes are in memory.
	Resident int
	// Released counts the codes released under the bound.
	Released uint64
}

// Stats returns the set's counts.
func (s *Set) Stats() Stats {
	return Stats{Compiling: s.running.Load(), Queued: s.queued.Load(), Resident: s.count(), Released: s.dropped.Load()}
}

// Close refuses new compiles, cancels those running (a compiler child is
// killed; wazero compiling in process ends when it ends) and waits for
// them, before the runtime closes what they compile into.
func (s *Set) Close() { s.life.end() }

// Wait waits for the compiles the set started so far (tests).
func (s *Set) Wait() { s.life.wg.Wait() }

// WarmUp compiles c in the background, a few at a time, unless the bound
// is already reached. It goes through AcquireBackground, so a call that
// started the compile first is joined, not repeated, a call never queues
// behind the warm-up's slots, and a call's compile stops the warm-up's.
func (s *Set) WarmUp(c *Code) {
	if !s.life.add() {
		return
	}
	s.queued.Add(1)
	go func() {
		defer s.life.done()
		queued := true
		defer func() {
			if queued {
				s.queued.Add(-1)
			}
		}()
		select {
		case s.slots <- struct{}{}:
		case <-s.life.ctx.Done():
			return
		}
		defer func() { <-s.slots }()
		queued = false
		s.queued.Add(-1)
		if err := s.noCallCompiling(s.life.ctx); err != nil {
			return
		}
		if s.max > 0 && s.count() >= s.max {
			return // the bound is reached: the first call compiles it
		}
		if _, err := c.AcquireBackground(s.life.ctx); err == nil {
			c.Release()
		}
	}()
}

// noCallCompiling waits until no call waits for a compile, or ctx or the
// set's lifetime ends (its error).
func (s *Set) noCallCompiling(ctx context.Context) error {
	for {
		s.mu.Lock()
		if s.calls == 0 {
			s.mu.Unlock()
			if s.life.ctx.Err() != nil {
				return errRuntimeClosed
			}
			return ctx.Err()
		}
		done := s.callsDone
		s.mu.Unlock()
		select {
		case <-done:
		case <-ctx.Done():
			return ctx.Err()
		case <-s.life.ctx.Done():
			return errRuntimeClosed
		}
	}
}

// begin records a compile starting: background work's, or one a call
// waits for, which stops the background ones.
func (s *Set) begin(p *compiling, background bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if background {
		p.background = true
		s.bg[p] = struct{}{}
		return
	}
	s.callWaitsLocked()
}

// join records a call waiting for p: a background compile becomes one a
// call waits for, and is no longer stopped.
func (s *Set) join(p *compiling) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !p.background {
		return
	}
	p.background = false
	delete(s.bg, p)
	s.callWaitsLocked()
}

// end records p's end.
func (s *Set) end(p *compiling) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if p.background {
		delete(s.bg, p)
		return
	}
	s.callEndsLocked()
}

// callEndsLocked counts one compile fewer that a call waits for. Callers
// hold s.mu.
func (s *Set) callEndsLocked() {
	if s.calls--; s.calls == 0 {
		close(s.callsDone)
	}
}

// Hold counts work a call waits for that is not one of the set's compiles
// (a module's interpreted form being made) as a call's compile: background
// work waits, and background compiles stop, until release is called.
func (s *Set) Hold() (release func()) {
	s.mu.Lock()
	s.callWaitsLocked()
	s.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			s.mu.Lock()
			s.callEndsLocked()
			s.mu.Unlock()
		})
	}
}

// callWaitsLocked counts one more compile a call waits for, and stops the
// background ones. Callers hold s.mu.
func (s *Set) callWaitsLocked() {
	if s.calls == 0 {
		s.callsDone = make(chan struct{})
	}
	s.calls++
	for q := range s.bg {
		q.stop(ErrYielded)
		delete(s.bg, q)
	}
}

// touch records a use of c, making it resident. Callers hold c.mu.
func (s *Set) touch(c *Code) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.seq++
	s.last[c] = s.seq
}

func (s *Set) forget(c *Code) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.last, c)
}

// count is how many codes are in memory.
func (s *Set) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.last)
}

// trim releases idle codes, least recently used first, while more than
// max are resident. A code in use stays; the bound is met again as its
// calls end.
func (s *Set) trim() {
	if s.max <= 0 {
		return
	}
	s.mu.Lock()
	over := len(s.last) - s.max
	var oldest []*Code
	if over > 0 {
		for c := range s.last {
			oldest = append(oldest, c)
		}
		slices.SortFunc(oldest, func(a, b *Code) int { return cmp.Compare(s.last[a], s.last[b]) })
	}
	s.mu.Unlock()
	for _, c := range oldest {
		if over == 0 {
			return
		}
		if c.release() {
			over--
		}
	}
}

// lifetime lets Close end the compiles the set started, and wait for
// them.
type lifetime struct {
	ctx    context.Context
	cancel context.CancelFunc
	mu     sync.Mutex
	closed bool
	wg     sync.WaitGroup
}

func newLifetime() lifetime {
	ctx, cancel := context.WithCancel(context.Background())
	return lifetime{ctx: ctx, cancel: cancel}
}

// add counts a compile about to start; false once the set is closing.
func (l *lifetime) add() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return false
	}
	l.wg.Add(1)
	return true
}

func (l *lifetime) done() { l.wg.Done() }

func (l *lifetime) end() {
	l.mu.Lock()
	l.closed = true
	l.mu.Unlock()
	l.cancel()
	l.wg.Wait()
}
