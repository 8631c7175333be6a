package membuf

import (
	"maps"
	"slices"
	"sync"
	"time"
)

// Bounds of what a runtime's memory pools keep (Pool): not
// configurable, since they trade allocations for memory nobody uses.
const (
	// poolBytes bounds the pooled buffers of all modules together: about
	// 70 Go guests' worth, far more than the calls a 2-core host runs at
	// once.
	poolBytes = 256 << 20
	// poolIdle is how long a module's buffers stay pooled after its last
	// instance was made or closed; warm instances retire after as long.
	poolIdle = 60 * time.Second
)

// Budget is what a runtime's memory pools keep in all: it refuses a
// buffer past its byte limit, and a sweeper, running while any pool holds
// buffers, drops the buffers of modules idle for idle. Its methods accept
// a nil *Budget (no budget). It is safe for concurrent use.
//
// Lock order: a pool's mu, then the budget's mu.
type Budget struct {
	limit int64
	idle  time.Duration
	clock func() int64 // monotonic nanoseconds; tests set it
	// dropped is called after a sweep dropped buffers (the runtime hands
	// the memory back to the operating system).
	dropped func()

	mu      sync.Mutex
	held    int64
	pools   map[*Pool]struct{} // those holding buffers
	sweeper bool               // a sweeper goroutine is running
	closed  chan struct{}
	swept   sync.WaitGroup // the sweeper, for close
}

// NewBudget returns the budget of a runtime's pools: 256 MiB in all, and
// a module's buffers dropped after a minute idle; dropped, if set, is
// called after a sweep dropped buffers.
func NewBudget(dropped func()) *Budget { return newBudget(poolBytes, poolIdle, dropped) }

func newBudget(limit int64, idle time.Duration, dropped func()) *Budget {
	start := time.Now()
	return &Budget{limit: limit, idle: idle, dropped: dropped, pools: map[*Pool]struct{}{},
		clock: func() int64 { return int64(time.Since(start)) }, closed: make(chan struct{})}
}

func (b *Budget) now() int64 {
	if b == nil {
		return 0
	}
	return b.clock()
}

// reserve counts n more bytes pooled by p, or reports that they would
// pass the limit. The caller holds p.mu.
func (b *Budget) reserve(p *Pool, n int64) bool {
	if b == nil {
		return true
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.held+n > b.limit {
		return false
	}
	b.held += n
	b.pools[p] = struct{}{}
	if !b.sweeper && b.clock != nil {
		select {
		case <-b.closed:
		default:
			b.sweeper = true
			b.swept.Go(func() { b.sweepEvery(b.idle / 4) })
		}
	}
	return true
}

// release counts n bytes no longer pooled. The caller holds the pool's mu.
func (b *Budget) release(n int64) {
	if b == nil || n == 0 {
		return
	}
	b.mu.Lock()
	b.held -= n
	b.mu.Unlock()
}

// forget counts the n bytes of a pool emptied by drop, and stops
// listing it. The caller holds p.mu.
func (b *Budget) forget(p *Pool, n int64) {
	if b == nil {
		return
	}
	b.mu.Lock()
	b.held -= n
	delete(b.pools, p)
	b.mu.Unlock()
}

// sweep drops the buffers of every pool unused for idle, and returns how
// many pools it emptied.
func (b *Budget) sweep() int {
	now := b.clock()
	b.mu.Lock()
	pools := slices.Collect(maps.Keys(b.pools))
	b.mu.Unlock()
	var emptied []*Pool
	for _, p := range pools {
		p.mu.Lock()
		switch {
		case len(p.bufs) == 0: // taken out since: nothing to watch
			b.forget(p, 0)
		case now-p.used >= int64(b.idle):
			p.dropLocked()
			emptied = append(emptied, p)
		}
		p.mu.Unlock()
	}
	for _, p := range emptied {
		if p.idle != nil {
			p.idle()
		}
	}
	if len(emptied) > 0 && b.dropped != nil {
		b.dropped()
	}
	return len(emptied)
}

// sweepEvery sweeps each period until no pool holds a buffer or the
// budget is closed.
func (b *Budget) sweepEvery(period time.Duration) {
	t := time.NewTicker(period)
	defer t.Stop()
	for {
		select {
		case <-b.closed:
			b.mu.Lock()
			b.sweeper = false
			b.mu.Unlock()
			return
		case <-t.C:
		}
		b.sweep()
		b.mu.Lock()
		if len(b.pools) == 0 {
			b.sweeper = false
			b.mu.Unlock()
			return
		}
		b.mu.Unlock()
	}
}

// Close stops the sweeper and waits for it (Runtime.Close).
func (b *Budget) Close() {
	b.mu.Lock()
	select {
	case <-b.closed:
	default:
		close(b.closed)
	}
	b.mu.Unlock()
	b.swept.Wait()
}

// Held is what the pools hold in all.
func (b *Budget) Held() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.held
}
