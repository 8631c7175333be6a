package loader_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolhost/toolhost/host"
	"github.com/toolhost/toolhost/internal/testkit/testwasm"
	"github.com/toolhost/toolhost/loader"
	"github.com/toolhost/toolhost/registry"
)

// With Options.Background a start lists at once the modules described
// before; the cold ones compile in the background and are each listed
// (OnChange, as for a reload) or refused when done; Starting and Listed
// say how far the start is, a refused module included.
func TestBackgroundStartListsColdModulesWhenDone(t *testing.T) {
	ctx := context.Background()
	dir, cache := t.TempDir(), t.TempDir()
	copyFile(t, testwasm.WAT(t, "host/testdata/wat/echo.wat"), filepath.Join(dir, "echo.wasm"))
	open := func(opts loader.Options) *loader.Live {
		rt, err := host.New(ctx, host.Config{CacheDir: cache, Lazy: true})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { rt.Close(ctx) })
		live, err := loader.Open(ctx, rt, dir, opts, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(live.Close)
		return live
	}
	open(loader.Options{}).Close() // echo is described: the next start lists it from the cache

	copyFile(t, testwasm.WAT(t, "host/testdata/wat/counter.wat"), filepath.Join(dir, "counter.wasm"))
	if err := os.WriteFile(filepath.Join(dir, "bad.wasm"), []byte("not wasm"), 0o600); err != nil {
		t.Fatal(err)
	}
	release := loader.HoldBackground()
	defer loader.ResetBackground()
	var progress bytes.Buffer
	live := open(loader.Options{Background: true, Progress: &progress})
	changed := make(chan *registry.Registry, 4)
	live.OnChange(func(r *registry.Registry) { changed <- r })
	if _, ok := live.Lookup("wat.echo"); !ok {
		t.Fatal("wat.echo, described before, is not listed at once")
	}
	if _, ok := live.Lookup("counter.fresh"); ok {
		t.Fatal("counter.fresh listed before its compile was let go")
	}
	if pending, total := live.Starting(); pending != 2 || total != 3 {
		t.Fatalf("Starting: %d pending of %d; want 2 of 3", pending, total)
	}
	if note := live.StartingNote(); note != "starting: 1 of 3 modules listed, 2 compiling" {
		t.Fatalf("StartingNote %q", note)
	}
	select {
	case <-live.Listed():
		t.Fatal("Listed closed with two modules compiling")
	default:
	}
	release()
	<-live.Listed()
	if _, ok := live.Lookup("counter.fresh"); !ok {
		t.Fatal("counter.fresh not listed once its background compile was done")
	}
	if pending, total := live.Starting(); pending != 0 || total != 3 || live.StartingNote() != "" {
		t.Fatalf("Starting after: %d of %d, note %q", pending, total, live.StartingNote())
	}
	heard := false
	for len(changed) > 0 { // listeners run before Listed closes
		_, ok := (<-changed).Lookup("counter.fresh")
		heard = heard || ok
	}
	if !heard {
		t.Fatal("the change listeners never heard of counter.fresh")
	}
	out := progress.String()
	for _, want := range []string{
		"load " + filepath.Join(dir, "counter.wasm") + " in the background",
		"counter.wasm: 2 tools (counter.reuse, counter.fresh)",
		"skip " + filepath.Join(dir, "bad.wasm"),
		"(3 of 3 modules listed)",
	} {
		if !strings.Contains(out, want) {
			t.Fatalf("progress lacks %q:\n%s", want, out)
		}
	}
}

// Closing a folder whose modules still compile in the background ends
// them: Close returns, and nothing is listed after.
func TestBackgroundStartClose(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	copyFile(t, testwasm.WAT(t, "host/testdata/wat/echo.wat"), filepath.Join(dir, "echo.wasm"))
	rt, err := host.New(ctx, host.Config{CacheDir: t.TempDir(), Lazy: true})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close(ctx)
	loader.HoldBackground()
	defer loader.ResetBackground()
	live, err := loader.Open(ctx, rt, dir, loader.Options{Background: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	live.Close()
	if _, ok := live.Lookup("wat.echo"); ok {
		t.Fatal("wat.echo listed after Close")
	}
}

// A clash at a start is decided as if every module loaded at once (the
// recorded owner, then file name order), even when the module that wins
// compiles in the background after the one it wins against was listed
// from the describe cache: the loser is refused then, naming the winner.
func TestBackgroundStartDecidesClashesAsOneLoad(t *testing.T) {
	ctx := context.Background()
	dir, cache := t.TempDir(), t.TempDir()
	copyFile(t, testwasm.WAT(t, "host/testdata/wat/echo.wat"), filepath.Join(dir, "echo.wasm"))
	rt, err := host.New(ctx, host.Config{CacheDir: cache, Lazy: true})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close(ctx)
	first, err := loader.Open(ctx, rt, dir, loader.Options{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	first.Close() // echo.wasm is described; no owners record is kept

	// clash.wasm sorts first and declares wat_echo, whose wire name is
	// wat.echo's: a start that loads both at once serves clash.wasm's.
	copyFile(t, testwasm.WAT(t, "host/testdata/wat/wireclash.wat"), filepath.Join(dir, "clash.wasm"))
	release := loader.HoldBackground()
	defer loader.ResetBackground()
	var progress bytes.Buffer
	live, err := loader.Open(ctx, rt, dir, loader.Options{Background: true, Progress: &progress}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer live.Close()
	if _, ok := live.Lookup("wat.echo"); !ok {
		t.Fatal("echo.wasm, described before, is not listed at once")
	}
	release()
	<-live.Listed()
	if _, ok := live.Lookup("wat.echo"); ok {
		t.Fatal("wat.echo of echo.wasm still served after clash.wasm, first in file order, was listed")
	}
	if _, ok := live.Lookup("wat_echo"); !ok {
		t.Fatal("wat_echo of clash.wasm not served")
	}
	want := "skip " + filepath.Join(dir, "echo.wasm") + `: tools "wat_echo" and "wat.echo" would both be listed as "wat_echo"`
	if !strings.Contains(progress.String(), want) {
		t.Fatalf("progress lacks %q:\n%s", want, progress.String())
	}
}

// A listener built from Registry() and registered after a background load
// swapped in a module hears of it with Follow: the server's listing is
// built that way, and with OnChange a module listed in the microseconds
// between the two was never listed (a WAT module described on the
// interpreter lists that fast).
func TestFollowHearsTheSwapsBeforeIt(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	copyFile(t, testwasm.WAT(t, "host/testdata/wat/counter.wat"), filepath.Join(dir, "counter.wasm"))
	rt, err := host.New(ctx, host.Config{CacheDir: t.TempDir(), Lazy: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.Close(ctx) })
	release := loader.HoldBackground()
	defer loader.ResetBackground()
	live, err := loader.Open(ctx, rt, dir, loader.Options{Background: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(live.Close)
	if _, ok := live.Registry().Lookup("counter.fresh"); ok {
		t.Fatal("counter.fresh listed before its background load was let go")
	}
	release()
	<-live.Listed() // the swap is done, and no listener was there to hear it
	heard := make(chan *registry.Registry, 2)
	live.Follow(func(r *registry.Registry) { heard <- r })
	select {
	case r := <-heard:
		if _, ok := r.Lookup("counter.fresh"); !ok {
			t.Fatal("Follow gave a registry without counter.fresh")
		}
	default:
		t.Fatal("Follow did not give the registry serving now: the listener missed the swap")
	}
}
