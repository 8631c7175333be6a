// Package overlap starts two calls at the same moment, for tests of what
// must hold when two goroutines race: a close from two shutdown paths, say.
package overlap

import (
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
)

// Need skips t unless two goroutines can run at once here (GOMAXPROCS of
// at least 2): without that, Run's calls never overlap.
func Need(t testing.TB) {
	t.Helper()
	if runtime.GOMAXPROCS(0) < 2 {
		t.Skip("needs two Ps for the calls to overlap")
	}
}

// Run calls a on a new goroutine and b on the caller's, released within
// nanoseconds of each other, and returns once both have returned. The
// goroutine spins on a flag rather than waiting on a channel, whose
// wake-up takes microseconds: long enough for a check-then-act race never
// to show.
func Run(a, b func()) {
	var start atomic.Bool
	var ready, done sync.WaitGroup
	ready.Add(1)
	done.Go(func() {
		ready.Done()
		for !start.Load() {
		}
		a()
	})
	ready.Wait()
	start.Store(true)
	b()
	done.Wait()
}
