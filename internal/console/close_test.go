package console_test

import (
	"runtime"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/toolhost/toolhost/events"
	"github.com/toolhost/toolhost/internal/console"
)

// TestCloseStreamsConcurrently: http.Server.Shutdown runs CloseStreams on
// a goroutine of its own while the server's Close calls Close, which calls
// it too (a CI run of TestASEgress panicked there: close of closed
// channel). Two calls at once must close the streams once. The other
// caller spins on a flag, so the two start within nanoseconds of each
// other: with a check-then-close, some round closes twice.
func TestCloseStreamsConcurrently(t *testing.T) {
	if runtime.GOMAXPROCS(0) < 2 {
		t.Skip("needs two Ps for the calls to overlap")
	}
	bus := events.NewBus(nil)
	for range 5000 {
		c := console.New(console.Options{Sources: console.Sources{Events: bus}})
		var start atomic.Bool
		var ready, done sync.WaitGroup
		ready.Add(1)
		done.Go(func() {
			ready.Done()
			for !start.Load() {
			}
			c.CloseStreams()
		})
		ready.Wait()
		start.Store(true)
		c.CloseStreams()
		done.Wait()
		c.Close() // and Close after both
	}
}
