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

	"github.com/toolhost/toolhost/internal/testkit/testwasm"
)

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
	if m.mem.Pooled() != 0 {
		t.Fatal("the module's pool holds the describe instance's memory after load")
	}
	if m.mem.Size() == 0 {
		t.Fatal("load did not size the module's memory from the describe instance")
	}
	if _, err := m.Call(ctx, "echo", []byte(`{"text":"x"}`), rt.cfg.Limits); err != nil {
		t.Fatal(err)
	}
	if m.mem.Pooled() != 1 || rt.mem.Held() == 0 {
		t.Fatal("a call's memory was not pooled for the next instance, within the runtime's budget")
	}
	if err := m.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if m.mem.Pooled() != 0 || rt.mem.Held() != 0 {
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

// TestPoolLearnsWhatTheDataWrites: a Go module's pool knows which bytes
// its data segments write (and so leaves them uncleared in a reused
// buffer) whether the module was compiled at load or listed from its
// describe cache entry and compiled for its first call.
func TestPoolLearnsWhatTheDataWrites(t *testing.T) {
	ctx := context.Background()
	path := testwasm.Go(t, "./host/testdata/misbehave")
	cache := t.TempDir()
	written := func(m *Module) (n uint64) {
		for _, s := range m.mem.Written() {
			n += s.End - s.At
		}
		return n
	}
	for i, lazy := range []bool{false, true} {
		rt, err := New(ctx, Config{CacheDir: cache, Lazy: lazy, Logger: slog.New(slog.DiscardHandler)})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { rt.Close(ctx) })
		m, err := rt.LoadFile(ctx, path)
		if err != nil {
			t.Fatal(err)
		}
		if lazy {
			if s := rt.ModuleStats(); s.DescribeHits != 1 || s.Compiles != 0 {
				t.Fatalf("second load: %+v; want it listed from the describe cache", s)
			}
			if n := written(m); n != 0 {
				t.Fatalf("listed without its bytes, the pool already knows %d bytes", n)
			}
			if _, err := m.Call(ctx, "echo", []byte(`{"text":"x"}`), rt.cfg.Limits); err != nil {
				t.Fatal(err)
			}
		}
		if n := written(m); n < 1<<20 {
			t.Fatalf("load %d (lazy %v): the pool knows %d bytes written by the data segments; a Go module's are over 1 MiB", i, lazy, n)
		}
	}
}
