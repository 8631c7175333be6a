package host

import (
	"runtime/debug"
	"sync"
	"time"
)

// settleQuiet is how long loading must have been idle before the memory
// it freed goes back to the operating system: long enough that the gaps
// between the modules of one batch (a rescan loads a few at a time) do not
// each pay a collection, short enough that a server is lean right after
// it starts.
const settleQuiet = 250 * time.Millisecond

// settler hands the heap that loading freed back to the operating system
// once loading goes quiet. Decoding and compiling a Go guest makes tens of
// MiB of garbage per module; with GOGC's default the heap's goal after a
// start is about twice what stays live, and the runtime's scavenger keeps
// what lies under the goal mapped, so an idle server held ~7 MiB per
// module it no longer used (docs/BENCHMARKS.md, "Memory per idle module").
// One debug.FreeOSMemory when a burst of loads ends returns it, for a
// collection's CPU once per burst, not per call. It is safe for
// concurrent use.
type settler struct {
	// free returns freed memory; debug.FreeOSMemory unless a test sets it.
	free func()
	// quiet is how long loading must be idle first (settleQuiet).
	quiet time.Duration

	mu    sync.Mutex
	busy  int         // loads and compiles in progress
	dirty bool        // one ended since the last free
	timer *time.Timer // armed while quiet and dirty; nil otherwise
	gen   uint64      // which timer may free: begin moves it on
	frees int         // done so far, for tests
}

func newSettler() *settler { return &settler{free: debug.FreeOSMemory, quiet: settleQuiet} }

// begin counts a load or compile starting; it holds back a pending free.
func (s *settler) begin() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.busy++
	s.disarmLocked()
}

// end counts one ending: when none is left, a free follows quiet later
// unless another starts first.
func (s *settler) end() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.busy--
	s.dirty = true
	if s.busy == 0 && s.timer == nil {
		gen := s.gen
		s.timer = time.AfterFunc(s.quiet, func() { s.fire(gen) })
	}
}

// fire frees, unless begin or stop disarmed its timer (gen) after it had
// already started to run.
func (s *settler) fire(gen uint64) {
	s.mu.Lock()
	if gen != s.gen || !s.dirty {
		s.mu.Unlock()
		return
	}
	s.timer, s.dirty = nil, false
	s.gen++
	s.frees++
	s.mu.Unlock()
	s.free()
}

func (s *settler) disarmLocked() {
	if s.timer != nil {
		s.timer.Stop()
		s.timer = nil
	}
	s.gen++
}

// stop cancels a pending free (Runtime.Close).
func (s *settler) stop() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.disarmLocked()
}
