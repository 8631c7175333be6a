package redisconn_test

import (
	"testing"

	"github.com/toolhost/toolhost/internal/redisconn"
	"github.com/toolhost/toolhost/internal/testkit/overlap"
)

// TestCloseConcurrently: two Closes at once close once (a check-then-close
// closed the channel twice and panicked). Open does not dial, so no Redis
// is needed.
func TestCloseConcurrently(t *testing.T) {
	overlap.Need(t)
	for range 2000 {
		c, err := redisconn.Open(redisconn.Options{URL: "redis://127.0.0.1:1/0"})
		if err != nil {
			t.Fatal(err)
		}
		shut := func() { _ = c.Close() }
		overlap.Run(shut, shut)
	}
}
