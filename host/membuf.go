package host

import (
	"sync"
	"sync/atomic"

	"github.com/tetratelabs/wazero/experimental"
)

// memPool keeps the linear-memory buffers of a module's closed instances
// for its next instances, and knows how large a new one should be. It is
// safe for concurrent use.
//
// A fresh Go instance needs several MiB of memory. Allocating it anew for
// every call made the Go heap zero the whole capacity each time and
// collect it soon after; a returned buffer is zeroed once, over the bytes
// its instance could reach, and handed to the next instance of the same
// module. sync.Pool drops idle buffers at garbage collection, so a module
// nobody calls holds no memory for long; and the buffer of the instance
// that described the module at load is dropped at once (drop), so a module
// holds none until it is called.
//
// The one rule that keeps one call's data out of another's: a buffer
// handed out is zero over its whole capacity. An instance can only ever
// see bytes below the length its memory reached; Free pools the buffer
// with that length, and the next allocator clears exactly those bytes
// before an instance gets it. Clearing when the buffer is taken, not when
// it is freed, keeps the clear off the path of a call stopped at its
// deadline: wazero frees a closed instance's memory on the call's own
// goroutine before the call returns, and clearing a Go guest's 3–4 MiB
// there was half of a timeout's lateness (about 0.5 ms of 1).
type memPool struct {
	// bufs holds *[]byte, zero from their length to their capacity; nil
	// until the first put, and after drop.
	bufs atomic.Pointer[sync.Pool]
	// size is the capacity a new buffer gets, in bytes: what an instance
	// had after _initialize at load, plus a quarter; 0 until it is known.
	size atomic.Uint64
}

// sizeFrom records the memory an instance had after _initialize as the
// basis for new buffers.
func (p *memPool) sizeFrom(bytes uint64) {
	const page = 65536
	want := bytes + bytes/4
	p.size.Store((want + page - 1) / page * page)
}

// allocator returns the memory allocator for one instance, capped at
// limit bytes.
func (p *memPool) allocator(limit uint64) experimental.MemoryAllocator {
	return experimental.MemoryAllocatorFunc(func(capHint, maxBytes uint64) experimental.LinearMemory {
		c := &cappedMemory{limit: min(maxBytes, limit), pool: p}
		if bufs := p.bufs.Load(); bufs != nil {
			if b, ok := bufs.Get().(*[]byte); ok {
				clear(*b)
				c.buf = (*b)[:0]
				return c
			}
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

// put returns a buffer whose bytes past its length are zero; the bytes
// up to its length are cleared when it is next taken.
func (p *memPool) put(b []byte) {
	bufs := p.bufs.Load()
	if bufs == nil {
		p.bufs.CompareAndSwap(nil, &sync.Pool{})
		bufs = p.bufs.Load()
	}
	bufs.Put(&b)
}

// drop lets go of every pooled buffer now, rather than at the second
// garbage collection from here as sync.Pool would: load calls it once the
// describe instance is closed, since a module may never be called, and
// the buffers it held are megabytes.
func (p *memPool) drop() { p.bufs.Store(nil) }

// cappedMemory is one instance's linear memory: it refuses to grow past
// limit, so memory.grow returns -1 in the guest instead of the host
// allocating without bound, and it goes back to its pool when the instance
// is closed.
type cappedMemory struct {
	buf   []byte
	limit uint64
	pool  *memPool // nil: not pooled
}

func (c *cappedMemory) Reallocate(size uint64) []byte {
	if size > c.limit {
		return nil
	}
	if size <= uint64(cap(c.buf)) {
		// The capacity is zero (fresh from make, or cleared by the
		// allocator when taken from the pool) and memory never shrinks, so
		// the bytes exposed here have never been written.
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
		c.pool.put(c.buf)
	}
	c.buf = nil
}
