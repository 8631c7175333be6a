package membuf

import (
	"bytes"
	"testing"
	"unsafe"

	"github.com/toolhost/toolhost/internal/wasmcheck"
)

// TestMemPoolHandsOutZeroes: however buffers come back (grown, partly
// used, dirty), every memory the pool hands out is zero over all it can
// ever expose, its capacity.
func TestMemPoolHandsOutZeroes(t *testing.T) {
	p := &Pool{}
	p.SizeFrom(3 * 65536)
	for round, used := range []uint64{0, 65536, 4 * 65536, 9 * 65536, 2 * 65536, 20 * 65536} {
		mem := p.Allocator(64<<20).Allocate(65536, 64<<20)
		c := mem.(*cappedMemory)
		all := c.buf[:cap(c.buf)]
		if at := bytes.IndexFunc(all, func(r rune) bool { return r != 0 }); at >= 0 {
			t.Fatalf("round %d: a handed-out buffer has a non-zero byte at %d of %d", round, at, len(all))
		}
		b := mem.Reallocate(used)
		for j := range b {
			b[j] = 0xa5
		}
		mem.Free()
	}
}

// TestMemPoolCapsGrowth: the limit bounds the memory, not the buffer the
// pool happens to have.
func TestMemPoolCapsGrowth(t *testing.T) {
	p := &Pool{}
	mem := p.Allocator(2*65536).Allocate(65536, 1<<32)
	if mem.Reallocate(65536) == nil || mem.Reallocate(2*65536) == nil {
		t.Fatal("refused growth within the limit")
	}
	if mem.Reallocate(3*65536) != nil {
		t.Fatal("grew past the limit")
	}
}

// TestMemPoolFreeLeavesTheClearToTheNextInstance: Free does not clear the
// buffer (wazero calls it on a call stopped at its deadline before the
// call returns, and clearing there made every timeout later), and the
// buffer is zero again once an allocator hands it out.
func TestMemPoolFreeLeavesTheClearToTheNextInstance(t *testing.T) {
	p := &Pool{}
	mem := p.Allocator(64<<20).Allocate(65536, 64<<20)
	b := mem.Reallocate(4 * 65536)
	for j := range b {
		b[j] = 0xa5
	}
	all := b[:cap(b)]
	mem.Free()
	if all[0] != 0xa5 || all[len(b)-1] != 0xa5 {
		t.Fatal("Free cleared the buffer: the clear belongs to the next allocation")
	}
	// sync.Pool may drop the buffer (it does at random under -race): take
	// until this one comes back or the pool is empty.
	for range 8 {
		next := p.Allocator(64<<20).Allocate(65536, 64<<20).(*cappedMemory)
		if unsafe.SliceData(next.buf[:1]) != unsafe.SliceData(all) {
			continue
		}
		if at := bytes.IndexFunc(all, func(r rune) bool { return r != 0 }); at >= 0 {
			t.Fatalf("the pooled buffer came back with a non-zero byte at %d", at)
		}
		return
	}
	t.Skip("the pool dropped the buffer (race mode); the clear was not exercised")
}

// TestMemPoolOverLeavesOnlyTheImage: a buffer for a restore (AllocatorOver)
// is cleared past the image only, and however the instance ends, even
// before the restore wrote the image, the next allocator (of either kind)
// clears every byte it may have left.
func TestMemPoolOverLeavesOnlyTheImage(t *testing.T) {
	const page, image = 65536, 3 * 65536
	p := &Pool{}
	p.SizeFrom(8 * page)
	fillOnce(p, 6*page)
	mem := p.AllocatorOver(64<<20, image).Allocate(page, 64<<20)
	c := mem.(*cappedMemory)
	all := c.buf[:cap(c.buf)]
	if all[0] != 0xa5 || all[image-1] != 0xa5 {
		t.Fatal("AllocatorOver cleared the image, which the restore overwrites")
	}
	if at := bytes.IndexFunc(all[image:], func(r rune) bool { return r != 0 }); at >= 0 {
		t.Fatalf("a byte past the image is not zero, at %d", image+at)
	}
	// The instance fails before its restore: its memory never grew past
	// the first page, yet the pool must know the image's bytes are dirty.
	mem.Reallocate(page)
	mem.Free()
	mem = p.Allocator(64<<20).Allocate(page, 64<<20)
	c = mem.(*cappedMemory)
	all = c.buf[:cap(c.buf)]
	if at := bytes.IndexFunc(all, func(r rune) bool { return r != 0 }); at >= 0 {
		t.Fatalf("after an instance that failed before its restore, a non-zero byte at %d", at)
	}
	mem.Free()
	// An image larger than what the last instance reached clears nothing
	// and keeps only what was written.
	fillOnce(p, 2*page)
	mem = p.AllocatorOver(64<<20, image).Allocate(page, 64<<20)
	c = mem.(*cappedMemory)
	if c.dirty != 2*page {
		t.Fatalf("dirty = %d, want the %d bytes the last instance reached", c.dirty, 2*page)
	}
	mem.Free()
}

// TestMemPoolLeavesWhatTheDataWrites: with the module's data spans
// recorded, a reused buffer keeps its old bytes exactly there and is zero
// everywhere else; a buffer that comes back shorter than the spans keeps
// nothing past its length; and spans that cannot be right are not
// recorded.
func TestMemPoolLeavesWhatTheDataWrites(t *testing.T) {
	const page = 65536
	spans := []wasmcheck.Span{{At: 100, End: 5000}, {At: 5000, End: 6000}, {At: 2 * page, End: 3*page + 7}}
	p := &Pool{}
	p.SizeFrom(8 * page)
	p.SetWritten(spans)
	inSpan := func(i uint64) bool {
		for _, s := range spans {
			if s.At <= i && i < s.End {
				return true
			}
		}
		return false
	}
	var reached uint64 // the most any instance of the buffer reached
	for _, used := range []uint64{6 * page, 2*page + 10, page} {
		fillOnce(p, used)
		reached = max(reached, used)
		c := p.Allocator(64<<20).Allocate(page, 64<<20).(*cappedMemory)
		all := c.buf[:cap(c.buf)]
		last := -1 // the last non-zero byte
		for i, v := range all {
			want := byte(0)
			if uint64(i) < reached && inSpan(uint64(i)) {
				want = 0xa5 // left for the instantiation to write
			}
			if v != want {
				t.Fatalf("after an instance that reached %d bytes: byte %d is %#x, want %#x", used, i, v, want)
			}
			if v != 0 {
				last = i
			}
		}
		if c.dirty < uint64(last+1) {
			t.Fatalf("dirty = %d, but byte %d is not zero: a failed instantiation would pool it as clean", c.dirty, last)
		}
		c.Free()
	}
	for _, bad := range [][]wasmcheck.Span{
		{{At: 10, End: 20}, {At: 15, End: 30}}, // overlapping
		{{At: 50, End: 60}, {At: 10, End: 20}}, // out of order
		{{At: 10, End: 10}},                    // empty
	} {
		p.SetWritten(bad)
		if w := p.Written(); w != nil {
			t.Errorf("SetWritten(%v) recorded %v", bad, w)
		}
	}
}

// fillOnce has an instance of p's module reach used bytes of memory, all
// written 0xa5, and close.
func fillOnce(p *Pool, used uint64) {
	mem := p.Allocator(64<<20).Allocate(65536, 64<<20)
	b := mem.Reallocate(used)
	for j := range b {
		b[j] = 0xa5
	}
	mem.Free()
}
