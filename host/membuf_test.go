package host

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"log/slog"
	"path/filepath"
	"testing"
	"unsafe"

	"github.com/toolhost/toolhost/internal/testwasm"
)

// TestMemPoolHandsOutZeroes: however buffers come back (grown, partly
// used, dirty), every memory the pool hands out is zero over all it can
// ever expose, its capacity.
func TestMemPoolHandsOutZeroes(t *testing.T) {
	p := &memPool{}
	p.sizeFrom(3 * 65536)
	for round, used := range []uint64{0, 65536, 4 * 65536, 9 * 65536, 2 * 65536, 20 * 65536} {
		mem := p.allocator(64<<20).Allocate(65536, 64<<20)
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
	p := &memPool{}
	mem := p.allocator(2*65536).Allocate(65536, 1<<32)
	if mem.Reallocate(65536) == nil || mem.Reallocate(2*65536) == nil {
		t.Fatal("refused growth within the limit")
	}
	if mem.Reallocate(3*65536) != nil {
		t.Fatal("grew past the limit")
	}
}

// TestFreshInstanceSeesNoEarlierBytes: an instance of a module never
// starts with bytes an earlier instance of it wrote, although instances
// reuse each other's memory buffers.
func TestFreshInstanceSeesNoEarlierBytes(t *testing.T) {
	ctx := context.Background()
	rt, path := misbehaveRuntime(t)
	m, err := rt.LoadFile(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	secret := make([]byte, 16)
	rand.Read(secret)
	token := []byte(hex.EncodeToString(secret))
	lim := rt.cfg.Limits
	reused := 0
	var last uintptr
	for range 10 {
		inst, err := m.instantiate(ctx, lim, discard{})
		if err != nil {
			t.Fatal(err)
		}
		mem := inst.mod.Memory()
		all, _ := mem.Read(0, mem.Size())
		if bytes.Contains(all, token) {
			t.Fatal("a fresh instance's memory holds bytes an earlier instance wrote")
		}
		if p := uintptr(unsafe.Pointer(unsafe.SliceData(all))); p == last {
			reused++
		} else {
			last = p
		}
		// Write where the guest's own start-up does not: spread over its
		// memory, up to the last byte.
		for at := uint32(0); at+uint32(len(token)) <= mem.Size(); at += mem.Size() / 7 {
			mem.Write(at, token)
		}
		mem.Write(mem.Size()-uint32(len(token)), token)
		inst.close()
		// And a call's worth of the guest's own writes.
		if _, err := m.Call(ctx, "echo", []byte(`{"text":"`+string(token)+`"}`), lim); err != nil {
			t.Fatal(err)
		}
	}
	if reused == 0 {
		t.Fatal("no instance reused an earlier one's memory: the test proves nothing")
	}
}

// TestMemPoolFreeLeavesTheClearToTheNextInstance: Free does not clear the
// buffer (wazero calls it on a call stopped at its deadline before the
// call returns, and clearing there made every timeout later), and the
// buffer is zero again once an allocator hands it out.
func TestMemPoolFreeLeavesTheClearToTheNextInstance(t *testing.T) {
	p := &memPool{}
	mem := p.allocator(64<<20).Allocate(65536, 64<<20)
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
		next := p.allocator(64<<20).Allocate(65536, 64<<20).(*cappedMemory)
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

// TestLoadKeepsNoMemoryBuffer: the instance that describes a module at
// load leaves no buffer in the module's pool (a module may never be
// called); its first call's buffer is pooled for the next, until the
// module is closed.
func TestLoadKeepsNoMemoryBuffer(t *testing.T) {
	ctx := context.Background()
	rt, path := misbehaveRuntime(t)
	m, err := rt.LoadFile(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	if m.mem.pooled() != 0 {
		t.Fatal("the module's pool holds the describe instance's memory after load")
	}
	if m.mem.size.Load() == 0 {
		t.Fatal("load did not size the module's memory from the describe instance")
	}
	if _, err := m.Call(ctx, "echo", []byte(`{"text":"x"}`), rt.cfg.Limits); err != nil {
		t.Fatal(err)
	}
	if m.mem.pooled() != 1 || rt.mem.heldBytes() == 0 {
		t.Fatal("a call's memory was not pooled for the next instance, within the runtime's budget")
	}
	if err := m.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if m.mem.pooled() != 0 || rt.mem.heldBytes() != 0 {
		t.Fatal("a closed module (a reload's old version) keeps its pooled memory")
	}
}

// misbehaveRuntime is a runtime with the defaults, closed when the test
// ends, and the path of the misbehave guest built for it (its compilation
// cache beside it, shared by the tests that use it).
func misbehaveRuntime(t *testing.T) (*Runtime, string) {
	t.Helper()
	path := testwasm.Go(t, "./host/testdata/misbehave")
	rt, err := New(context.Background(), Config{CacheDir: filepath.Join(filepath.Dir(path), "wazero-cache"), Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.Close(context.Background()) })
	return rt, path
}
