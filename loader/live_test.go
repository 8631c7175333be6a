package loader_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/toolhost/toolhost/host"
	"github.com/toolhost/toolhost/internal/testkit/testwasm"
	"github.com/toolhost/toolhost/loader"
	"github.com/toolhost/toolhost/registry"
)

func newRuntime(t *testing.T) *host.Runtime {
	t.Helper()
	rt, err := host.New(context.Background(), host.Config{CacheDir: filepath.Join(os.TempDir(), "toolhost-test-cache")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.Close(context.Background()) })
	return rt
}

func copyFile(t *testing.T, src, dst string, extra ...byte) {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, append(b, extra...), 0o644); err != nil {
		t.Fatal(err)
	}
}

// variant is a custom section to append to a module: same code, new bytes,
// new sha256 — a "new version" of a plugin without rebuilding it.
func variant(tag byte) []byte {
	name := []byte("toolhost-test")
	body := append([]byte{byte(len(name))}, name...)
	body = append(body, tag)
	return append([]byte{0, byte(len(body))}, body...)
}

func names(reg *registry.Registry) string {
	var ns []string
	for _, t := range reg.List() {
		ns = append(ns, t.Name+"@"+t.Module.SHA256[:8])
	}
	return strings.Join(ns, " ")
}

func TestLiveRescan(t *testing.T) {
	ctx := context.Background()
	echo := testwasm.WAT(t, "host/testdata/wat/echo.wat")
	dup := testwasm.WAT(t, "host/testdata/wat/dupname.wat")
	math := testwasm.Go(t, "./tools-src/mathtools")
	dir := t.TempDir()
	copyFile(t, echo, filepath.Join(dir, "echo.wasm"))

	live, err := loader.Open(ctx, newRuntime(t), dir, loader.Options{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var swaps []*registry.Registry
	live.OnChange(func(r *registry.Registry) { swaps = append(swaps, r) })
	if _, ok := live.Lookup("wat.echo"); !ok {
		t.Fatal("wat.echo not served after Open")
	}
	v1, _ := live.Lookup("wat.echo")

	t.Run("nothing changed", func(t *testing.T) {
		ch, err := live.Rescan(ctx)
		if err != nil || !ch.Empty() || len(swaps) != 0 {
			t.Fatalf("change %+v, %d swaps; want none", ch, len(swaps))
		}
	})
	t.Run("new file", func(t *testing.T) {
		copyFile(t, math, filepath.Join(dir, "math.wasm"))
		ch, _ := live.Rescan(ctx)
		if len(ch.Loaded) != 1 || len(swaps) != 1 {
			t.Fatalf("change %+v", ch)
		}
		if _, ok := live.Lookup("math.eval"); !ok {
			t.Fatalf("math.eval missing: %s", names(live.Registry()))
		}
	})
	t.Run("replaced file", func(t *testing.T) {
		copyFile(t, echo, filepath.Join(dir, "echo.wasm"), variant(1)...)
		live.Rescan(ctx)
		v2, _ := live.Lookup("wat.echo")
		if v2.Module.SHA256 == v1.Module.SHA256 {
			t.Fatal("the new version is not serving")
		}
	})
	t.Run("broken replacement keeps the old version", func(t *testing.T) {
		before, _ := live.Lookup("wat.echo")
		if err := os.WriteFile(filepath.Join(dir, "echo.wasm"), []byte("not wasm"), 0o644); err != nil {
			t.Fatal(err)
		}
		ch, _ := live.Rescan(ctx)
		after, ok := live.Lookup("wat.echo")
		if len(ch.Errors) != 1 || !ok || after.Module.SHA256 != before.Module.SHA256 {
			t.Fatalf("change %+v; wat.echo must keep serving its previous version", ch)
		}
		// The refused bytes are remembered, not retried every rescan.
		if ch, _ := live.Rescan(ctx); !ch.Empty() {
			t.Fatalf("second rescan of the same broken bytes: %+v", ch)
		}
		res, err := after.Handler.Handle(ctx, json.RawMessage(`{"still":"here"}`))
		if err != nil || string(res) != `{"still":"here"}` {
			t.Fatalf("old version: %s, %v", res, err)
		}
	})
	t.Run("name clash refused", func(t *testing.T) {
		copyFile(t, dup, filepath.Join(dir, "dup.wasm"))
		ch, _ := live.Rescan(ctx)
		if len(ch.Errors) != 1 || !strings.Contains(ch.Errors[0].Reason, "echo.wasm") {
			t.Fatalf("change %+v; want the clash named", ch)
		}
	})
	t.Run("removed file removes its tools", func(t *testing.T) {
		os.Remove(filepath.Join(dir, "math.wasm"))
		ch, _ := live.Rescan(ctx)
		if len(ch.Removed) != 1 {
			t.Fatalf("change %+v", ch)
		}
		if _, ok := live.Lookup("math.eval"); ok {
			t.Fatal("math.eval still served after its file was removed")
		}
	})
}

// A call in flight on a module that is replaced finishes on it; the module
// is closed only afterwards.
func TestLiveInFlightCallFinishesOnOldVersion(t *testing.T) {
	ctx := context.Background()
	mb := testwasm.Go(t, "./host/testdata/misbehave")
	dir := t.TempDir()
	copyFile(t, mb, filepath.Join(dir, "mb.wasm"))
	live, err := loader.Open(ctx, newRuntime(t), dir, loader.Options{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	old, _ := live.Lookup("sleep")
	var wg sync.WaitGroup
	var res json.RawMessage
	var callErr error
	wg.Go(func() {
		res, callErr = old.Handler.Handle(ctx, json.RawMessage(`{"ms":300}`))
	})
	for live.InFlight() == 0 { // the call has taken its reference
		runtime.Gosched()
	}
	copyFile(t, mb, filepath.Join(dir, "mb.wasm"), variant(2)...)
	if ch, _ := live.Rescan(ctx); len(ch.Loaded) != 1 {
		t.Fatalf("change %+v", ch)
	}
	wg.Wait()
	if callErr != nil || string(res) != `"slept"` {
		t.Fatalf("in-flight call on the replaced version: %s, %v", res, callErr)
	}
	// Once idle, the old version is closed: a call that looked up the old
	// record just before the swap runs on the new version instead of
	// touching freed code or failing (issue 10 finding 4).
	if res, err := old.Handler.Handle(ctx, json.RawMessage(`{"ms":0}`)); err != nil || string(res) != `"slept"` {
		t.Fatalf("stale handler after retirement: %s, %v; want it run on the new version", res, err)
	}
	cur, _ := live.Lookup("sleep")
	if res, err := cur.Handler.Handle(ctx, json.RawMessage(`{"ms":0}`)); err != nil || string(res) != `"slept"` {
		t.Fatalf("new version: %s, %v", res, err)
	}
}

func TestLiveCompileCacheStats(t *testing.T) {
	ctx := context.Background()
	dir := testwasm.Dir(t, testwasm.WAT(t, "host/testdata/wat/echo.wat"))
	cache := t.TempDir()
	open := func() *loader.Live {
		rt, err := host.New(ctx, host.Config{CacheDir: cache})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { rt.Close(ctx) })
		live, err := loader.Open(ctx, rt, dir, loader.Options{}, nil)
		if err != nil {
			t.Fatal(err)
		}
		return live
	}
	if h, m := open().CacheStats(); h != 0 || m != 1 {
		t.Fatalf("cold cache: %d hits, %d misses; want 0, 1", h, m)
	}
	if h, m := open().CacheStats(); h != 1 || m != 0 {
		t.Fatalf("warm cache: %d hits, %d misses; want 1, 0", h, m)
	}
}
