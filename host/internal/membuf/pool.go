// Package membuf is where instances' linear memories come from: a Pool
// per module keeps the zeroed buffers of its closed instances for its
// next ones, within a Budget the runtime's modules share. It is host's
// alone.
package membuf

import (
	"sync"
	"sync/atomic"

	"github.com/toolhost/toolhost/internal/wasmcheck"
	"github.com/toolhost/toolhost/third_party/wazero/experimental"
)

// Pool keeps the linear-memory buffers of a module's closed instances
// for its next instances, and knows how large a new one should be. It is
// safe for concurrent use. The zero value pools without a runtime's
// budget (tests); a Runtime's modules share one (Budget).
//
// A fresh Go instance needs several MiB of memory. Allocating it anew for
// every call made the Go heap zero the whole capacity each time and
// collect it soon after; a returned buffer is zeroed once, over the bytes
// its instance could reach, and handed to the next instance of the same
// module.
//
// What it keeps is bounded, since each buffer is megabytes: at most
// poolPerModule buffers per module and the budget's bytes in all, and a
// module's buffers are dropped once it has had no instance for the
// budget's idle time. The buffer of the instance that described the module
// at load is dropped at once (drop): a module holds none until it is
// called.
//
// The one rule that keeps one call's data out of another's: a buffer
// handed out is zero over its whole capacity but for bytes that
// instantiation writes before any guest code runs: the module's data
// segments (SetWritten), or for a restore from a snapshot its whole image
// (AllocatorOver). An instance can only ever see bytes below the length
// its memory reached; Free pools the buffer with that length (or, if
// longer, the bytes the allocator left uncleared), and the next allocator
// clears those bytes, but for the ones its instantiation writes, before
// an instance gets it. Clearing when the buffer is taken, not when
// it is freed, keeps the clear off the path of a call stopped at its
// deadline: wazero frees a closed instance's memory on the call's own
// goroutine before the call returns, and clearing a Go guest's 3–4 MiB
// there was half of a timeout's lateness (about 0.5 ms of 1).
type Pool struct {
	budget *Budget // nil: no bound in all, no idle drop

	mu   sync.Mutex
	bufs [][]byte // zero from their length to their capacity; newest last
	used int64    // the budget's clock when an instance last took or returned a buffer
	// size is the capacity a new buffer gets, in bytes: what an instance
	// had after _initialize at load, plus a quarter; 0 until it is known.
	size atomic.Uint64
	// idle, if set, is called after the budget's sweep dropped the pool's
	// buffers for being unused past the idle time.
	idle func()
	// written is what SetWritten recorded: the bytes an instantiation
	// from the module's data segments writes; nil until known.
	written atomic.Pointer[[]wasmcheck.Span]
}

// poolPerModule bounds the buffers one module keeps: about the calls of
// one tool in flight at once by default (its concurrency of 8), so a burst
// past it costs allocations, not memory held for good.
const poolPerModule = 8

// NewPool returns a module's pool within b (nil: no bound in all, no idle
// drop).
func NewPool(b *Budget) *Pool { return &Pool{budget: b} }

// OnIdle sets what the budget's sweep calls after it dropped the pool's
// buffers for being unused past the idle time (the module has had no
// instance made or closed since): the module lets go of other memory then.
// Set it before the pool is used.
func (p *Pool) OnIdle(f func()) { p.idle = f }

// Size is the capacity a new buffer gets (see SizeFrom); 0 until known.
func (p *Pool) Size() uint64 { return p.size.Load() }

// SizeFrom records the memory an instance had after _initialize as the
// basis for new buffers.
func (p *Pool) SizeFrom(bytes uint64) {
	const page = 65536
	want := bytes + bytes/4
	p.size.Store((want + page - 1) / page * page)
}

// SetWritten records the bytes that instantiating the module writes from
// its active data segments before any of its code runs: sorted, disjoint,
// within the memory the module starts with. Allocator's buffers are then
// not cleared there, since the instantiation overwrites them: for a Go
// module about 2 MiB of the 4 MiB a fresh instance's memory reaches.
// spans must hold for every instantiation that uses the pool's buffers
// (it comes from the module's bytes, which the pool serves alone); a
// module whose instantiation writes something else, or cannot say,
// records nothing. Spans out of order, overlapping or empty record
// nothing either.
func (p *Pool) SetWritten(spans []wasmcheck.Span) {
	var at uint64
	for _, s := range spans {
		if s.At < at || s.End <= s.At {
			spans = nil
			break
		}
		at = s.End
	}
	if len(spans) == 0 {
		p.written.Store(nil)
		return
	}
	p.written.Store(&spans)
}

// Written is what SetWritten recorded (nil: nothing).
func (p *Pool) Written() []wasmcheck.Span {
	if w := p.written.Load(); w != nil {
		return *w
	}
	return nil
}

// Allocator returns the memory allocator for one instance, capped at
// limit bytes, instantiated from the module's data segments.
func (p *Pool) Allocator(limit uint64) experimental.MemoryAllocator {
	return p.allocator(limit, p.Written())
}

// AllocatorOver is Allocator for an instance restored from a snapshot of
// image bytes of memory that writes every byte of them before any guest
// code runs (the wazero fork's snapshot.RestoreOver): a pooled buffer is
// cleared only past image, since clearing what the restore overwrites
// would write those bytes twice. Until then the buffer's first bytes may
// hold a previous instance's; Free pools it with a length that covers
// them, so that an instance that failed before the restore wrote them
// cannot pass them on.
func (p *Pool) AllocatorOver(limit, image uint64) experimental.MemoryAllocator {
	return p.allocator(limit, []wasmcheck.Span{{At: 0, End: image}})
}

// allocator is the allocator of an instance whose instantiation writes
// every byte of written (sorted, disjoint) before any guest code runs.
func (p *Pool) allocator(limit uint64, written []wasmcheck.Span) experimental.MemoryAllocator {
	return experimental.MemoryAllocatorFunc(func(capHint, maxBytes uint64) experimental.LinearMemory {
		c := &cappedMemory{limit: min(maxBytes, limit), pool: p}
		if b := p.take(); b != nil {
			c.buf, c.dirty = b[:0], clearOutside(b, written)
			return c
		}
		// Before load has measured the module: room for twice its declared
		// minimum, as a Go guest grows from its minimum in _initialize.
		size := p.size.Load()
		if size == 0 {
			size = 2 * capHint
		}
		c.buf = make([]byte, 0, min(size, limit))
		return c
	})
}

// clearOutside zeroes b but for the bytes of written, which may keep an
// earlier instance's bytes, and returns how many of b's first bytes may be
// non-zero: up to the end of the last span within b.
func clearOutside(b []byte, written []wasmcheck.Span) (dirty uint64) {
	n := uint64(len(b))
	var at uint64 // b is zero, or written, below at
	for _, s := range written {
		if s.At >= n {
			break
		}
		clear(b[at:s.At])
		at = min(s.End, n)
	}
	clear(b[at:])
	return at
}

// take returns the newest pooled buffer, or nil.
func (p *Pool) take() []byte {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.used = p.budget.now()
	n := len(p.bufs)
	if n == 0 {
		return nil
	}
	b := p.bufs[n-1]
	p.bufs[n-1] = nil
	p.bufs = p.bufs[:n-1]
	p.budget.release(int64(cap(b)))
	return b
}

// put pools a buffer whose bytes past its length are zero (the bytes up
// to its length are cleared when it is next taken), unless the module or
// the budget already holds its fill: then it is left to the collector.
func (p *Pool) put(b []byte) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.used = p.budget.now()
	if len(p.bufs) >= poolPerModule || !p.budget.reserve(p, int64(cap(b))) {
		return
	}
	p.bufs = append(p.bufs, b)
}

// Drop lets go of every pooled buffer now. Load calls it once the
// describe instance is closed, since a module may never be called, and
// the budget's sweep for a module idle past its idle time.
func (p *Pool) Drop() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.dropLocked()
}

func (p *Pool) dropLocked() {
	var n int64
	for i, b := range p.bufs {
		n += int64(cap(b))
		p.bufs[i] = nil
	}
	p.bufs = nil
	p.budget.forget(p, n)
}

// Pooled is how many buffers the pool holds.
func (p *Pool) Pooled() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.bufs)
}

// cappedMemory is one instance's linear memory: it refuses to grow past
// limit, so memory.grow returns -1 in the guest instead of the host
// allocating without bound, and it goes back to its pool when the instance
// is closed.
type cappedMemory struct {
	buf   []byte
	limit uint64
	pool  *Pool // nil: not pooled
	// dirty is how many of buf's first bytes may be non-zero before the
	// instance wrote any (an earlier instance's bytes where this one's
	// instantiation writes); past it, and past len(buf), the capacity is
	// zero.
	dirty uint64
}

func (c *cappedMemory) Reallocate(size uint64) []byte {
	if size > c.limit {
		return nil
	}
	if size <= uint64(cap(c.buf)) {
		// The capacity is zero (fresh from make, or cleared by the
		// allocator when taken from the pool) and memory never shrinks, so
		// the bytes exposed here have never been written, but for some of
		// the first dirty ones, which the instantiation writes before the
		// guest runs.
		c.buf = c.buf[:size]
		return c.buf
	}
	// Grow geometrically: a Go guest grows its heap a few pages at a time
	// and each reallocation copies.
	next := make([]byte, size, min(max(size, 2*uint64(cap(c.buf))), c.limit))
	copy(next, c.buf)
	c.buf = next
	return next
}

// Free pools the buffer, its length marking what the instance could have
// written (cleared before the buffer is used again). wazero calls it once,
// when the instance is closed and no guest code can run in it any more.
func (c *cappedMemory) Free() {
	if c.pool != nil && c.buf != nil {
		c.pool.put(c.buf[:max(uint64(len(c.buf)), c.dirty)])
	}
	c.buf = nil
}
