package redisconn_test

import (
	"runtime"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/toolhost/toolhost/internal/redisconn"
)

// TestCloseConcurrently: two Closes at once close once (a check-then-close
// closed the channel twice and panicked). Open does not dial, so no Redis
// is needed. The other caller spins on a flag so that the two start within
// nanoseconds of each other.
func TestCloseConcurrently(t *testing.T) {
	if runtime.GOMAXPROCS(0) < 2 {
		t.Skip("needs two Ps for the calls to overlap")
	}
	for range 3000 {
		c, err := redisconn.Open(redisconn.Options{URL: "redis://127.0.0.1:1/0"})
		if err != nil {
			t.Fatal(err)
		}
		var start atomic.Bool
		var ready, done sync.WaitGroup
		ready.Add(1)
		done.Go(func() {
			ready.Done()
			for !start.Load() {
			}
			_ = c.Close()
		})
		ready.Wait()
		start.Store(true)
		_ = c.Close()
		done.Wait()
	}
}
