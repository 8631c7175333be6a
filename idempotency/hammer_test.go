package idempotency_test

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolhost/toolhost/idempotency"
)

// P goroutines × N iterations on K keys under -race. For each key, at most
// one leader runs at a time, and every follower gets the outcome of the
// leader it joined: the latest leader to claim the key before the
// follower's Acquire (for keep=false, one that had not completed yet).
func TestHammer(t *testing.T) {
	const (
		P = 100
		N = 50
		K = 10
	)
	tests := []struct {
		name string
		ttl  time.Duration
		keep bool
	}{
		// Every outcome is released at once: leadership rotates all the time.
		{"keep=false", 0, false},
		// Every outcome is kept, but for 1 ns: replays and expiries race.
		{"keep=true, tiny TTL", time.Nanosecond, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := idempotency.NewMemory(tt.ttl)
			var (
				active    [K]atomic.Int32 // leaders running now
				started   [K]atomic.Int64 // leaders that claimed the key
				completed [K]atomic.Int64 // leaders whose Complete returned
				leaders   atomic.Int64
				followers atomic.Int64
			)
			var wg sync.WaitGroup
			for p := range P {
				wg.Go(func() {
					for i := range N {
						k := (p + i) % K
						key := fmt.Sprintf("key-%d", k)
						startedBefore := started[k].Load()
						completedBefore := completed[k].Load()
						c, err := m.Acquire(context.Background(), key, "fp-"+key)
						if err != nil {
							t.Errorf("Acquire(%s): %v", key, err)
							return
						}
						if c.Leader() {
							leaders.Add(1)
							if n := active[k].Add(1); n != 1 {
								t.Errorf("%s: %d leaders at once", key, n)
							}
							gen := started[k].Add(1)
							runtime.Gosched() // let others pile up as followers
							o := idempotency.Outcome{Result: fmt.Appendf(nil, "%s#%d", key, gen), Attempts: int(gen)}
							if gen%3 == 0 {
								o.Err = errors.New(string(o.Result))
							}
							active[k].Add(-1) // before Complete: the next leader may start right after
							c.Complete(o, tt.keep)
							completed[k].Add(1)
							if got, err := c.Wait(context.Background()); err != nil || !sameOutcome(got, o) {
								t.Errorf("%s: leader's Wait = %+v, %v", key, got, err)
							}
							continue
						}
						followers.Add(1)
						o, err := c.Wait(context.Background())
						if err != nil {
							t.Errorf("%s: Wait: %v", key, err)
							return
						}
						gen := int64(o.Attempts)
						if want := fmt.Sprintf("%s#%d", key, gen); string(o.Result) != want {
							t.Errorf("%s: follower got %q, which no leader of this key produced", key, o.Result)
						}
						if (gen%3 == 0) != (o.Err != nil) {
							t.Errorf("%s: follower got error %v for leader #%d", key, o.Err, gen)
						}
						lo := startedBefore
						if !tt.keep {
							lo = max(lo, completedBefore+1)
						}
						if hi := started[k].Load(); gen < lo || gen > hi {
							t.Errorf("%s: follower joined leader #%d, but only #%d..#%d were possible", key, gen, lo, hi)
						}
					}
				})
			}
			wg.Wait()
			if leaders.Load()+followers.Load() != P*N {
				t.Errorf("%d leaders + %d followers != %d", leaders.Load(), followers.Load(), P*N)
			}
			if leaders.Load() < K {
				t.Errorf("only %d leaders for %d keys", leaders.Load(), K)
			}
			t.Logf("%d leaders, %d followers", leaders.Load(), followers.Load())
			if !tt.keep {
				if n := m.Len(); n != 0 {
					t.Errorf("Len = %d at the end, want 0", n)
				}
			}
		})
	}
}
