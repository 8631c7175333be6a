package host_test

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/toolhost/toolhost/host"
	"github.com/toolhost/toolhost/host/internal/resident"
	"github.com/toolhost/toolhost/internal/attempt"
)

// copyModule copies the fixture name into dir, so a test may change or
// remove its file without touching the shared fixture.
func copyModule(t *testing.T, dir, name string) string {
	t.Helper()
	b, err := os.ReadFile(watPath(t, name))
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, name+".wasm")
	if err := os.WriteFile(p, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// describedOnce loads the fixture into a fresh cache folder, so that its
// describe cache entry exists, and returns the folder and the module's
// file.
func describedOnce(t *testing.T, name string) (cache, path string) {
	t.Helper()
	cache = t.TempDir()
	path = copyModule(t, t.TempDir(), name)
	rt := newRuntime(t, host.Config{CacheDir: cache, Lazy: true})
	if _, err := rt.LoadFile(context.Background(), path); err != nil {
		t.Fatal(err)
	}
	if s := rt.ModuleStats(); s.Compiles != 1 || s.DescribeHits != 0 {
		t.Fatalf("first load: %+v; want one compile, no describe cache hit", s)
	}
	return cache, path
}

// A restart with a warm describe cache lists the module's tools without
// compiling (or instantiating) it; its first call compiles it, and the
// ones after reuse that.
func TestLazyLoadListsWithoutCompiling(t *testing.T) {
	cache, path := describedOnce(t, "echo")
	rt := newRuntime(t, host.Config{CacheDir: cache, Lazy: true})
	m, err := rt.LoadFile(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	if s := rt.ModuleStats(); s.Compiles != 0 || s.DescribeHits != 1 || m.Resident() {
		t.Fatalf("warm restart: %+v, resident %v; want nothing compiled, one describe cache hit", s, m.Resident())
	}
	var names []string
	for _, tool := range m.Tools {
		names = append(names, tool.Name)
	}
	if !strings.Contains(strings.Join(names, ","), "echo") {
		t.Fatalf("tools %v from the cache; want echo among them", names)
	}
	for range 2 {
		res, err := m.Call(context.Background(), "echo", []byte(`{"a":1}`), host.Limits{})
		if err != nil || string(res) != `{"a":1}` {
			t.Fatalf("call: %s, %v", res, err)
		}
	}
	if s := rt.ModuleStats(); s.Compiles != 1 || !m.Resident() {
		t.Fatalf("after two calls: %+v; want exactly one compile, on demand", s)
	}
}

// Without Lazy the describe cache is written but every load compiles:
// the host's default is unchanged.
func TestEagerLoadCompilesDespiteDescribeCache(t *testing.T) {
	cache, path := describedOnce(t, "echo")
	rt := newRuntime(t, host.Config{CacheDir: cache})
	if _, err := rt.LoadFile(context.Background(), path); err != nil {
		t.Fatal(err)
	}
	if s := rt.ModuleStats(); s.Compiles != 1 || s.DescribeHits != 0 {
		t.Fatalf("eager load: %+v; want one compile", s)
	}
}

// The describe cache is input from disk: an entry that is damaged, names
// another module, or lies about the module is never believed. The module
// is described again (a compile), and its tools are the real ones.
func TestDescribeCacheBadEntryIsIgnored(t *testing.T) {
	for name, damage := range map[string]func(b []byte) []byte{
		"garbage":   func([]byte) []byte { return []byte("\x00\xffnot json") },
		"truncated": func(b []byte) []byte { return b[:len(b)/2] },
		"empty":     func([]byte) []byte { return nil },
		"flipped manifest byte": func(b []byte) []byte {
			// Base64 of the manifest: change one letter of it.
			i := strings.Index(string(b), `"manifest":"`) + len(`"manifest":"`) + 10
			b[i] ^= 0x01
			return b
		},
		"another module's sha256": func(b []byte) []byte {
			return []byte(strings.Replace(string(b), `"sha256":"`, `"sha256":"0`, 1))
		},
		"more memory than it needs, sum recomputed": nil, // see below
	} {
		t.Run(name, func(t *testing.T) {
			cache, path := describedOnce(t, "echo")
			entries, _ := filepath.Glob(filepath.Join(cache, "describe-v*", "*.json"))
			if len(entries) != 1 {
				t.Fatalf("describe cache entries %v; want one", entries)
			}
			b, err := os.ReadFile(entries[0])
			if err != nil {
				t.Fatal(err)
			}
			if damage == nil {
				// A well-formed entry whose facts the compiled module
				// contradicts is caught at the compile, not believed.
				b = []byte(strings.Replace(string(b), `"min_bytes":`, `"min_bytes":1`, 1))
				if b, err = host.ResumDescribeEntry(b); err != nil {
					t.Fatal(err)
				}
			} else {
				b = damage(b)
			}
			if err := os.WriteFile(entries[0], b, 0o600); err != nil {
				t.Fatal(err)
			}
			rt := newRuntime(t, host.Config{CacheDir: cache, Lazy: true})
			m, err := rt.LoadFile(context.Background(), path)
			if err != nil {
				t.Fatalf("load with a bad describe cache entry: %v", err)
			}
			if damage == nil {
				if _, err := m.Call(context.Background(), "echo", []byte(`{}`), host.Limits{}); err == nil {
					t.Fatal("a call on a module whose entry lied about it ran")
				}
				if _, err := os.Stat(entries[0]); !errors.Is(err, os.ErrNotExist) {
					t.Fatalf("the lying entry was kept: %v", err)
				}
				return
			}
			if s := rt.ModuleStats(); s.Compiles != 1 || s.DescribeHits != 0 {
				t.Fatalf("load: %+v; want the module described afresh", s)
			}
			res, err := m.Call(context.Background(), "echo", []byte(`{"ok":true}`), host.Limits{})
			if err != nil || string(res) != `{"ok":true}` {
				t.Fatalf("call: %s, %v", res, err)
			}
			// Rewritten: the next start is lazy again.
			rt2 := newRuntime(t, host.Config{CacheDir: cache, Lazy: true})
			if _, err := rt2.LoadFile(context.Background(), path); err != nil {
				t.Fatal(err)
			}
			if s := rt2.ModuleStats(); s.DescribeHits != 1 {
				t.Fatalf("after the rewrite: %+v; want a describe cache hit", s)
			}
		})
	}
}

// Under MaxResident, an idle module's compiled code is released when
// another needs room, and its next call compiles it again.
func TestMaxResidentReleasesAndReloads(t *testing.T) {
	dir := t.TempDir()
	a, b := copyModule(t, dir, "echo"), copyModule(t, dir, "guesterror")
	rt := newRuntime(t, host.Config{CacheDir: t.TempDir(), MaxResident: 1})
	ma, err := rt.LoadFile(context.Background(), a)
	if err != nil {
		t.Fatal(err)
	}
	mb, err := rt.LoadFile(context.Background(), b)
	if err != nil {
		t.Fatal(err)
	}
	if ma.Resident() || !mb.Resident() {
		t.Fatalf("after loading two under a budget of one: echo resident %v, guesterror %v; want the older released", ma.Resident(), mb.Resident())
	}
	before := rt.ModuleStats()
	if res, err := ma.Call(context.Background(), "echo", []byte(`[1]`), host.Limits{}); err != nil || string(res) != `[1]` {
		t.Fatalf("call after release: %s, %v", res, err)
	}
	after := rt.ModuleStats()
	if after.Compiles != before.Compiles+1 || after.Resident != 1 || !ma.Resident() || mb.Resident() {
		t.Fatalf("before %+v, after %+v (echo %v, guesterror %v); want one recompile and the budget kept", before, after, ma.Resident(), mb.Resident())
	}
}

// A call that arrives while its module compiles waits under its own
// deadline: past it, the call ends with the deadline and is marked as
// having had no guest time (host-starved, never the tool's fault), and the
// compile finishes for the next call.
func TestCallWaitsForCompileUnderItsDeadline(t *testing.T) {
	cache, path := describedOnce(t, "echo")
	rt := newRuntime(t, host.Config{CacheDir: cache, Lazy: true})
	m, err := rt.LoadFile(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	ctx, stats := attempt.With(ctx)
	if _, err := m.Call(ctx, "echo", []byte(`{}`), host.Limits{}); !errors.Is(err, context.Canceled) {
		t.Fatalf("a call whose context ended while its module was not compiled: %v; want context.Canceled", err)
	}
	if guest, ran := stats.Guest(); !ran || guest != 0 {
		t.Fatalf("guest time %v (ran %v); want 0 in a module", guest, ran)
	}
	ctx, cancel = context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if res, err := m.Call(ctx, "echo", []byte(`{}`), host.Limits{}); err != nil || string(res) != `{}` {
		t.Fatalf("the next call: %s, %v", res, err)
	}
}

// A module whose file changed since it was listed is not compiled from
// the new bytes under the old manifest: the call is told to try again
// (the reload will bring the new version).
func TestLazyModuleFileChanged(t *testing.T) {
	cache, path := describedOnce(t, "echo")
	rt := newRuntime(t, host.Config{CacheDir: cache, Lazy: true})
	m, err := rt.LoadFile(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	other, _ := os.ReadFile(watPath(t, "guesterror"))
	if err := os.WriteFile(path, other, 0o600); err != nil {
		t.Fatal(err)
	}
	_, err = m.Call(context.Background(), "echo", []byte(`{}`), host.Limits{})
	if err == nil || !strings.Contains(err.Error(), "changed on disk") {
		t.Fatalf("call after the file changed: %v; want a transient error saying so", err)
	}
}

// With WarmUp, modules listed from the describe cache compile in the
// background after the start, so their first calls need not; the resident
// budget bounds the warm-up too.
func TestWarmUpCompilesListedModules(t *testing.T) {
	cacheA, a := describedOnce(t, "echo")
	dir := filepath.Dir(a)
	b := copyModule(t, dir, "guesterror")
	rt0 := newRuntime(t, host.Config{CacheDir: cacheA, Lazy: true})
	if _, err := rt0.LoadFile(context.Background(), b); err != nil {
		t.Fatal(err)
	}
	for name, tc := range map[string]struct {
		maxResident, want int
	}{"no budget": {0, 2}, "a budget of one": {1, 1}} {
		t.Run(name, func(t *testing.T) {
			rt := newRuntime(t, host.Config{CacheDir: cacheA, Lazy: true, WarmUp: true, MaxResident: tc.maxResident})
			for _, p := range []string{a, b} {
				if _, err := rt.LoadFile(context.Background(), p); err != nil {
					t.Fatal(err)
				}
			}
			rt.WaitBackground()
			if s := rt.ModuleStats(); s.DescribeHits != 2 || s.Compiles != uint64(tc.want) || s.Resident != tc.want {
				t.Fatalf("after the warm-up: %+v; want both listed from the cache and %d compiled", s, tc.want)
			}
		})
	}
}

// A compile on demand that the runtime's closing stops, or that a call's
// compile stops (a background one), is not a failure of the module: it
// says so at debug level, without the warning a real failure gets, so
// stopping a server during a lazy start, or calling during one, logs no
// warnings.
func TestCompileStoppedByCloseIsNotAWarning(t *testing.T) {
	cache, path := describedOnce(t, "echo")
	for name, tc := range map[string]struct {
		cause error  // what stops the compile (nil: context.Canceled, as the runtime's closing)
		want  string // the debug line; "" for a real failure, which is not stopped
	}{"stopped": {nil, "runtime is closing"}, "yielded": {resident.ErrYielded, "stopped for a call's compile"}, "failed": {nil, ""}} {
		stop, want := tc.want != "", tc.want
		t.Run(name, func(t *testing.T) {
			var logs strings.Builder
			rt := newRuntime(t, host.Config{CacheDir: cache, Lazy: true,
				Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
			m, err := rt.LoadFile(context.Background(), path)
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancelCause(context.Background())
			if stop {
				// The compiled code gone too, so the compile has work to stop.
				dropCompiledCode(t, cache)
				cancel(tc.cause)
			} else {
				defer cancel(nil)
				// A real failure: the file no longer holds the bytes it was listed with.
				orig, err := os.ReadFile(path)
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { _ = os.WriteFile(path, orig, 0o600) })
				if err := os.WriteFile(path, []byte("\x00asm\x01\x00\x00\x00"), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			if err := m.CompileOnDemand(ctx); err == nil {
				t.Fatal("compile succeeded; want it stopped or failed")
			}
			warned := strings.Contains(logs.String(), "level=WARN")
			if stop && (warned || !strings.Contains(logs.String(), want)) {
				t.Fatalf("stopped compile logged:\n%s\nwant a debug line and no warning", logs.String())
			}
			if !stop && !strings.Contains(logs.String(), "level=WARN msg=\"compiling a module on demand failed\"") {
				t.Fatalf("failed compile logged:\n%s\nwant the warning", logs.String())
			}
		})
	}
}

// dropCompiledCode removes everything in the cache folder but the
// describe cache.
func dropCompiledCode(t *testing.T, cache string) {
	t.Helper()
	entries, err := os.ReadDir(cache)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), "describe-") {
			if err := os.RemoveAll(filepath.Join(cache, e.Name())); err != nil {
				t.Fatal(err)
			}
		}
	}
}
