package loader_test

import (
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolhost/toolhost/host"
	"github.com/toolhost/toolhost/internal/testkit/testwasm"
	"github.com/toolhost/toolhost/loader"
)

// A restart with a warm describe cache (host.Config.Lazy) serves every
// tool without compiling a module, says so in its progress line, compiles
// a module on its first call, and still hot-reloads: a changed file
// replaces a module that never compiled.
func TestLazyRestartListsWithoutCompiling(t *testing.T) {
	ctx := context.Background()
	echo := testwasm.WAT(t, "host/testdata/wat/echo.wat")
	dir, cache := t.TempDir(), t.TempDir()
	copyFile(t, echo, filepath.Join(dir, "echo.wasm"))
	start := func() (*host.Runtime, *loader.Live, string) {
		rt, err := host.New(ctx, host.Config{CacheDir: cache, Lazy: true})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { rt.Close(ctx) })
		var progress bytes.Buffer
		live, err := loader.Open(ctx, rt, dir, loader.Options{Progress: &progress}, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(live.Close)
		return rt, live, progress.String()
	}
	if rt, _, _ := start(); rt.ModuleStats().Compiles != 1 {
		t.Fatalf("cold start: %+v; want one compile", rt.ModuleStats())
	}
	rt, live, progress := start()
	if s := rt.ModuleStats(); s.Compiles != 0 || s.DescribeHits != 1 {
		t.Fatalf("warm start: %+v; want nothing compiled", s)
	}
	if !strings.Contains(progress, "compiles on its first call") {
		t.Fatalf("progress %q; want it to say the module compiles on its first call", progress)
	}
	rec, ok := live.Lookup("wat.echo")
	if !ok {
		t.Fatal("wat.echo not served after a warm start")
	}
	if res, err := rec.Handler.Handle(ctx, json.RawMessage(`{"x":1}`)); err != nil || string(res) != `{"x":1}` {
		t.Fatalf("first call: %s, %v", res, err)
	}
	if s := rt.ModuleStats(); s.Compiles != 1 {
		t.Fatalf("after the first call: %+v; want one compile", s)
	}

	// A new version of a module that is listed but never compiled.
	copyFile(t, echo, filepath.Join(dir, "echo.wasm"), variant(1)...)
	ch, err := live.Rescan(ctx)
	if err != nil || len(ch.Loaded) != 1 {
		t.Fatalf("reload: %+v, %v; want echo.wasm reloaded", ch, err)
	}
	rec2, _ := live.Lookup("wat.echo")
	if rec2.Module.SHA256 == rec.Module.SHA256 {
		t.Fatal("reload kept the old version")
	}
	if res, err := rec2.Handler.Handle(ctx, json.RawMessage(`{"y":2}`)); err != nil || string(res) != `{"y":2}` {
		t.Fatalf("call on the reloaded version: %s, %v", res, err)
	}
}
