package loader

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/toolhost/toolhost/host"
	"github.com/toolhost/toolhost/internal/testkit/testwasm"
	"github.com/toolhost/toolhost/registry"
)

func openInternal(t *testing.T, dir string, fsys folderFS) *Live {
	t.Helper()
	return openWith(t, host.Config{CacheDir: filepath.Join(os.TempDir(), "toolhost-test-cache")}, dir, fsys)
}

// openWith is Open on a runtime configured by cfg, with the folder read
// through fsys from the first scan on.
func openWith(t *testing.T, cfg host.Config, dir string, fsys folderFS) *Live {
	t.Helper()
	ctx := context.Background()
	rt, err := host.New(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.Close(ctx) })
	// open, with the folder read through fsys from the first scan on.
	l := newLive(ctx, rt, dir, Options{}, discardLogger())
	l.fs = fsys
	t.Cleanup(l.Close)
	empty, _ := registry.New(nil)
	l.cur.Store(empty)
	if _, err := l.Rescan(ctx); err != nil {
		var se *ScanError
		if !errors.As(err, &se) || se.Listing != nil {
			t.Fatal(err)
		}
	}
	return l
}

// faultyRead fails reads of one file name while fail is set.
func faultyRead(name string, fail *atomic.Bool) folderFS {
	f := osFS
	f.readFile = func(p string) ([]byte, error) {
		if fail.Load() && filepath.Base(p) == name {
			return nil, &os.PathError{Op: "read", Path: p, Err: syscall.EIO}
		}
		return host.ReadModuleFile(p)
	}
	return f
}

// A changed file that cannot be read keeps its previous version serving
// (issue 10 finding 3): a read error is not a removal.
func TestRescanReadErrorKeepsVersion(t *testing.T) {
	echo := testwasm.WAT(t, "host/testdata/wat/echo.wat")
	dir := t.TempDir()
	p := filepath.Join(dir, "echo.wasm")
	copyBytes(t, echo, p, nil)
	var fail atomic.Bool
	l := openInternal(t, dir, faultyRead("echo.wasm", &fail))
	v1, ok := l.Lookup("wat.echo")
	if !ok {
		t.Fatal("wat.echo not served")
	}
	copyBytes(t, echo, p, []byte{0, 3, 1, 'x', 1}) // a new version: must be read
	fail.Store(true)
	ch, err := l.Rescan(context.Background())
	var se *ScanError
	if !errors.As(err, &se) || se.Files[p] == nil || !errors.Is(err, syscall.EIO) {
		t.Fatalf("rescan with an unreadable file: %v; want a ScanError naming it", err)
	}
	if cur, ok := l.Lookup("wat.echo"); !ok || cur.Module.SHA256 != v1.Module.SHA256 || len(ch.Removed) != 0 {
		t.Fatalf("after a read error: served %v, change %+v; want the old version kept", ok, ch)
	}
	fail.Store(false)
	if ch, err := l.Rescan(context.Background()); err != nil || len(ch.Loaded) != 1 {
		t.Fatalf("once readable: %+v, %v; want the new version loaded", ch, err)
	}
	if cur, _ := l.Lookup("wat.echo"); cur.Module.SHA256 == v1.Module.SHA256 {
		t.Fatal("the new version is not serving")
	}
}

// Watch retries a rescan that could not read everything, with doubling
// backoff, without any file changing: the cause may pass by itself.
func TestWatchRetriesFailedScanWithBackoff(t *testing.T) {
	dir := t.TempDir()
	copyBytes(t, testwasm.WAT(t, "host/testdata/wat/echo.wat"), filepath.Join(dir, "echo.wasm"), nil)
	copyBytes(t, testwasm.WAT(t, "host/testdata/wat/guesterror.wat"), filepath.Join(dir, "b.wasm"), nil)
	var fail atomic.Bool
	fail.Store(true)
	l := openInternal(t, dir, faultyRead("b.wasm", &fail))
	if _, ok := l.Lookup("wat.echo"); !ok {
		t.Fatal("wat.echo not served")
	}
	type wait struct {
		d    time.Duration
		fire chan time.Time
	}
	waits := make(chan wait)
	l.after = func(d time.Duration) <-chan time.Time {
		w := wait{d, make(chan time.Time, 1)}
		waits <- w
		return w.fire
	}
	changed := make(chan *registry.Registry, 1)
	l.OnChange(func(r *registry.Registry) { changed <- r })
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- l.Watch(ctx, time.Hour) }()
	defer func() { cancel(); <-done }()

	for _, want := range []time.Duration{RetryMin, 2 * RetryMin, 4 * RetryMin} {
		w := <-waits
		if w.d != want {
			t.Fatalf("retry scheduled after %v; want %v", w.d, want)
		}
		if _, ok := l.Lookup("wat.echo"); !ok {
			t.Fatal("wat.echo dropped while b.wasm could not be read")
		}
		if want == 4*RetryMin {
			fail.Store(false) // the cause passes
		}
		w.fire <- time.Now()
	}
	reg := <-changed
	if _, ok := reg.Lookup("wat.guesterror"); !ok {
		t.Fatal("b.wasm's tool not loaded once readable")
	}
}

func TestNextBackoffCaps(t *testing.T) {
	d := time.Duration(0)
	for range 20 {
		d = nextBackoff(d)
	}
	if d != RetryMax {
		t.Fatalf("backoff grew to %v; want it capped at %v", d, RetryMax)
	}
}

func copyBytes(t *testing.T, src, dst string, extra []byte) {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, append(b, extra...), 0o644); err != nil {
		t.Fatal(err)
	}
}

func discardLogger() *slog.Logger { return slog.New(slog.DiscardHandler) }
