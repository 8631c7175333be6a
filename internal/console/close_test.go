package console_test

import (
	"testing"

	"github.com/toolhost/toolhost/events"
	"github.com/toolhost/toolhost/internal/console"
	"github.com/toolhost/toolhost/internal/testkit/overlap"
)

// TestCloseStreamsConcurrently: http.Server.Shutdown runs CloseStreams on
// a goroutine of its own while the server's Close calls Close, which calls
// it too (a CI run of TestASEgress panicked there: close of closed
// channel). Two calls at once must close the streams once: with a
// check-then-close, some round of these closes twice.
func TestCloseStreamsConcurrently(t *testing.T) {
	overlap.Need(t)
	bus := events.NewBus(nil)
	for range 2000 {
		c := console.New(console.Options{Sources: console.Sources{Events: bus}})
		overlap.Run(c.CloseStreams, c.CloseStreams)
		c.Close() // and Close after both
	}
}
