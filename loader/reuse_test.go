package loader_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/toolhost/toolhost/abi"
	"github.com/toolhost/toolhost/host"
	"github.com/toolhost/toolhost/internal/testkit/testwasm"
	"github.com/toolhost/toolhost/loader"
	"github.com/toolhost/toolhost/registry"
)

// callAs runs the tool the way the dispatcher does, for caller, and
// returns its result.
func callAs(t *testing.T, reg interface {
	Lookup(string) (*registry.Tool, bool)
}, tool, caller string) string {
	t.Helper()
	rec, ok := reg.Lookup(tool)
	if !ok {
		t.Fatalf("no tool %s", tool)
	}
	rh, ok := rec.Handler.(registry.RequestHandler)
	if !ok {
		t.Fatalf("%s's handler takes no caller", tool)
	}
	res, err := rh.HandleRequest(context.Background(), registry.Request{Caller: caller})
	if err != nil {
		t.Fatalf("%s as %s: %v", tool, caller, err)
	}
	return string(res)
}

// TestReuseFollowsTheOperator: a tool reuses instances only when its
// manifest declares it and neither its own config nor its module's says
// reuse = false (the tool's word wins over the module's); the record says
// which mode is in force.
func TestReuseFollowsTheOperator(t *testing.T) {
	dir := t.TempDir()
	copyFile(t, testwasm.WAT(t, "host/testdata/wat/counter.wat"), filepath.Join(dir, "counter.wasm"))
	yes, no := true, false
	for _, c := range []struct {
		name  string
		opts  loader.Options
		tool  string
		reuse bool
	}{
		{"manifest says reuse", loader.Options{}, "counter.reuse", true},
		{"manifest says fresh", loader.Options{Overrides: map[string]loader.Override{"counter.fresh": {Reuse: &yes}}}, "counter.fresh", false},
		{"tool says no", loader.Options{Overrides: map[string]loader.Override{"counter.reuse": {Reuse: &no}}}, "counter.reuse", false},
		{"module says no", loader.Options{Reuse: map[string]bool{"counter.wasm": false}}, "counter.reuse", false},
		{"module says no, tool yes", loader.Options{Reuse: map[string]bool{"counter.wasm": false},
			Overrides: map[string]loader.Override{"counter.reuse": {Reuse: &yes}}}, "counter.reuse", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			res, err := loader.Load(context.Background(), newRuntime(t), dir, c.opts)
			if err != nil || len(res.Errors) > 0 {
				t.Fatal(err, res.Errors)
			}
			rec, _ := res.Registry.Lookup(c.tool)
			want, second := abi.InstancesFresh, "1"
			if c.reuse {
				want, second = abi.InstancesReuse, "2"
			}
			if rec.Instances != want {
				t.Errorf("Instances = %q, want %q", rec.Instances, want)
			}
			callAs(t, res.Registry, c.tool, "alice")
			if got := callAs(t, res.Registry, c.tool, "alice"); got != second {
				t.Errorf("second call = %s, want %s", got, second)
			}
		})
	}
	t.Run("reuse off in the runtime", func(t *testing.T) {
		rt, err := host.New(context.Background(), host.Config{CacheDir: filepath.Join(os.TempDir(), "toolhost-test-cache"), Reuse: host.Reuse{Off: true}})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { rt.Close(context.Background()) })
		res, err := loader.Load(context.Background(), rt, dir, loader.Options{
			Overrides: map[string]loader.Override{"counter.reuse": {Reuse: &yes}}})
		if err != nil {
			t.Fatal(err)
		}
		if rec, _ := res.Registry.Lookup("counter.reuse"); rec.Instances != abi.InstancesFresh {
			t.Errorf("Instances = %q, want fresh", rec.Instances)
		}
		callAs(t, res.Registry, "counter.reuse", "alice")
		if got := callAs(t, res.Registry, "counter.reuse", "alice"); got != "1" {
			t.Errorf("second call = %s, want 1", got)
		}
	})
}

// TestReuseEndsWithReload: a hot reload that replaces a module retires its
// warm instances once its calls are done; the caller's next call runs in
// the new version, from fresh state.
func TestReuseEndsWithReload(t *testing.T) {
	ctx := context.Background()
	// One instance per tool: no spare warmed in the background, so the
	// counts below are exact.
	rt, err := host.New(ctx, host.Config{CacheDir: filepath.Join(os.TempDir(), "toolhost-test-cache"), Reuse: host.Reuse{MaxPerTool: 1}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.Close(ctx) })
	dir := t.TempDir()
	src := testwasm.WAT(t, "host/testdata/wat/counter.wat")
	copyFile(t, src, filepath.Join(dir, "counter.wasm"))
	live, err := loader.Open(ctx, rt, dir, loader.Options{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { live.Close() })
	callAs(t, live, "counter.reuse", "alice")
	if got := callAs(t, live, "counter.reuse", "alice"); got != "2" {
		t.Fatalf("before the reload: %s, want 2", got)
	}
	copyFile(t, src, filepath.Join(dir, "counter.wasm"), variant(1)...)
	if _, err := live.Rescan(ctx); err != nil {
		t.Fatal(err)
	}
	if got := rt.RetiredInstances()[host.RetiredClosed]; got != 1 {
		t.Errorf("retired at the reload: %d, want 1", got)
	}
	if s := rt.PoolStats(); len(s) != 0 {
		t.Errorf("after the reload: %+v, want no warm instances", s)
	}
	if got := callAs(t, live, "counter.reuse", "alice"); got != "1" {
		t.Errorf("after the reload: %s, want 1 (the new version)", got)
	}
}
