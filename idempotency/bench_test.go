package idempotency

import (
	"context"
	"strconv"
	"sync/atomic"
	"testing"
	"time"
)

// BenchmarkMemory is the store under parallel load: every goroutine draws
// keys from a small space, so most Acquires find a kept outcome (replay)
// and some lead a new execution.
func BenchmarkMemory(b *testing.B) {
	m := NewMemory(time.Minute)
	ctx := context.Background()
	var n atomic.Int64
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			key := strconv.FormatInt(n.Add(1)%4096, 10)
			c, err := m.Acquire(ctx, key, "fp")
			if err != nil {
				b.Error(err)
				return
			}
			if c.Leader() {
				c.Complete(Outcome{Result: []byte(`{}`), Attempts: 1}, true)
			}
			if _, err := c.Wait(ctx); err != nil {
				b.Error(err)
				return
			}
		}
	})
}
