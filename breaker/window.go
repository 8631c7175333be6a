package breaker

import "sync/atomic"

// window counts a closed breaker's calls and failures over the last
// Window, lock-free: Window is cut into buckets slots, each one word that
// packs the bucket's epoch (which Window/buckets period it counts) with
// its calls and failures, updated by compare-and-swap. A slot whose epoch
// is not current is stale: the first call of a new period starts it
// afresh. The sum covers the current bucket and the buckets-1 before it,
// so the window slides in steps of Window/buckets.
type window struct {
	width int64 // nanoseconds per bucket, ≥ 1
	slots [buckets]atomic.Uint64
}

const (
	buckets   = 10
	countBits = 20 // calls and failures per bucket, each
	countMask = 1<<countBits - 1
	epochBits = 64 - 2*countBits
	epochMask = 1<<epochBits - 1
)

func (w *window) init(d int64) { w.width = max(d/buckets, 1) }

// add counts one call at now, a failure if failed.
func (w *window) add(now int64, failed bool) {
	ep := now / w.width
	s := &w.slots[ep%buckets]
	epoch := uint64(ep) & epochMask
	for {
		old := s.Load()
		calls, fails := old>>countBits&countMask, old&countMask
		if old>>(2*countBits) != epoch {
			calls, fails = 0, 0
		}
		if calls == countMask {
			// Full: halve both, keeping the ratio the breaker reads.
			calls, fails = calls>>1, fails>>1
		}
		calls++
		if failed {
			fails++
		}
		if s.CompareAndSwap(old, epoch<<(2*countBits)|calls<<countBits|fails) {
			return
		}
	}
}

// sum returns the calls and failures counted in the window ending at now.
func (w *window) sum(now int64) (calls, fails int64) {
	cur := now / w.width
	for ep := cur; ep > cur-buckets && ep >= 0; ep-- {
		v := w.slots[ep%buckets].Load()
		if v>>(2*countBits) != uint64(ep)&epochMask {
			continue
		}
		calls += int64(v >> countBits & countMask)
		fails += int64(v & countMask)
	}
	return calls, fails
}

// reset forgets every count. A call recorded concurrently may survive it:
// the counts are a rate estimate, not an audit.
func (w *window) reset() {
	for i := range w.slots {
		w.slots[i].Store(0)
	}
}
