package host_test

import (
	"context"
	"crypto/rand"
	"fmt"
	"os"
	"testing"

	"github.com/toolhost/toolhost/abi"
	"github.com/toolhost/toolhost/dispatcher"
	"github.com/toolhost/toolhost/host"
	"github.com/toolhost/toolhost/internal/testkit/testwasm"
	"github.com/toolhost/toolhost/loader"
	"github.com/toolhost/toolhost/registry"
	"github.com/toolhost/toolhost/third_party/wazero"
	"github.com/toolhost/toolhost/third_party/wazero/api"
	"github.com/toolhost/toolhost/third_party/wazero/imports/wasi_snapshot_preview1"
)

// BenchmarkCompile is a restart's cost per module: a new Runtime loading
// the Go fixture (compile, checks, one describe instance). cold compiles
// into an empty cache folder each time; warm reads a primed one.
func BenchmarkCompile(b *testing.B) {
	ctx := context.Background()
	load := func(b *testing.B, dir string) {
		rt, err := host.New(ctx, host.Config{CacheDir: dir, Logger: quietLogger()})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := rt.LoadFile(ctx, misbehavePath); err != nil {
			b.Fatal(err)
		}
		if err := rt.Close(ctx); err != nil {
			b.Fatal(err)
		}
	}
	b.Run("cold", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			load(b, b.TempDir())
		}
	})
	b.Run("warm", func(b *testing.B) {
		dir := b.TempDir()
		load(b, dir)
		b.ReportAllocs()
		for b.Loop() {
			load(b, dir)
		}
	})
}

// BenchmarkCall is one call in a fresh instance. toolhost is Module.Call;
// raw-wazero is the floor: the same module, runtime configuration and
// steps (instantiate, alloc and write name and args, toolhost_call, read,
// close) through plain wazero, with no toolhost code. The -wat pair does
// the same with echo.wat, a bare module whose instance costs microseconds,
// so any fixed per-call overhead of the host shows.
func BenchmarkCall(b *testing.B) {
	ctx := context.Background()
	rt, mb, echo := sharedRuntime(b)
	loadFile := func(b *testing.B, path string) *host.Module {
		m, err := rt.LoadFile(ctx, path)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { m.Close(ctx) })
		return m
	}
	raw := newRawRuntime(b)

	bench := func(name string, call func() ([]byte, error), want string) {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				res, err := call()
				if err != nil || string(res) != want {
					b.Fatalf("call = %s, %v; want %s", res, err, want)
				}
			}
		})
	}
	args := []byte(`{}`)
	goMod := raw.compile(b, misbehavePath)
	bench("toolhost", func() ([]byte, error) { return mb.Call(ctx, "state", args, host.Limits{}) }, "1")
	d := dispatcherFor(b, mb, "state")
	bench("dispatcher+toolhost", func() ([]byte, error) {
		return d.Call(ctx, dispatcher.Call{Tool: "state", Args: args})
	}, "1")
	bench("raw-wazero", func() ([]byte, error) { return raw.call(ctx, goMod, "state", args) }, `{"result":1}`)

	// The same kind of work in C and in Go: wordfreq.top (C, abi/c) and
	// text.count (Go, abi/guest), each in a fresh instance.
	textMod := loadFile(b, testwasm.Go(b, "./tools-src/text"))
	bench("toolhost-go-text.count", func() ([]byte, error) {
		return textMod.Call(ctx, "text.count", []byte(`{"text":"the cat and the hat"}`), host.Limits{})
	}, `{"words":5,"lines":1,"runes":19,"bytes":19}`)
	cMod := loadFile(b, testwasm.C(b, "tools-src-c/wordfreq"))
	bench("toolhost-c-wordfreq.top", func() ([]byte, error) {
		return cMod.Call(ctx, "wordfreq.top", []byte(`{"text":"the cat and the hat","top":1}`), host.Limits{})
	}, `{"words":5,"unique":4,"top":[{"word":"the","count":2}]}`)

	watMod := raw.compile(b, watPath(b, "echo"))
	bench("toolhost-wat", func() ([]byte, error) { return echo.Call(ctx, "wat.echo", args, host.Limits{}) }, "{}")
	bench("raw-wazero-wat", func() ([]byte, error) { return raw.call(ctx, watMod, "wat.echo", args) }, `{"result":{}}`)
}

// dispatcherFor is the whole server-side path minus MCP: registry record,
// argument validation, the dispatcher's policies, then Module.Call.
func dispatcherFor(b testing.TB, m *host.Module, tool string) *dispatcher.Dispatcher {
	for _, t := range m.Tools {
		if t.Name == tool {
			reg, err := registry.New([]*registry.Tool{loader.Record(m, t, loader.Override{})})
			if err != nil {
				b.Fatal(err)
			}
			return dispatcher.New(reg, dispatcher.Config{})
		}
	}
	b.Fatalf("no tool %s", tool)
	return nil
}

// rawRuntime is wazero configured as host.New configures it: the
// compiler, the file cache, close on context done, WASI preview 1, real
// clocks and randomness, _initialize as the start function.
type rawRuntime struct {
	rt  wazero.Runtime
	cfg wazero.ModuleConfig
}

func newRawRuntime(b testing.TB) *rawRuntime {
	ctx := context.Background()
	cache, err := wazero.NewCompilationCacheWithDir(cacheDir)
	if err != nil {
		b.Fatal(err)
	}
	rt := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfigCompiler().
		WithCloseOnContextDone(true).WithCompilationCache(cache))
	wasi_snapshot_preview1.MustInstantiate(ctx, rt)
	b.Cleanup(func() { rt.Close(ctx); cache.Close(ctx) })
	return &rawRuntime{rt: rt, cfg: wazero.NewModuleConfig().
		WithName("").
		WithStartFunctions("_initialize").
		WithSysWalltime().
		WithSysNanotime().
		WithRandSource(rand.Reader)}
}

func (r *rawRuntime) compile(b testing.TB, path string) wazero.CompiledModule {
	wasm, err := os.ReadFile(path)
	if err != nil {
		b.Fatal(err)
	}
	c, err := r.rt.CompileModule(context.Background(), wasm)
	if err != nil {
		b.Fatal(err)
	}
	return c
}

// call returns the raw response document.
func (r *rawRuntime) call(ctx context.Context, c wazero.CompiledModule, tool string, args []byte) ([]byte, error) {
	mod, err := r.rt.InstantiateModule(ctx, c, r.cfg)
	if err != nil {
		return nil, err
	}
	defer mod.Close(ctx)
	return r.callLive(ctx, mod, tool, args)
}

// callLive is one toolhost_call into a live instance, its exports looked
// up for this call.
func (r *rawRuntime) callLive(ctx context.Context, mod api.Module, tool string, args []byte) ([]byte, error) {
	return rawWarmCall(ctx, &rawWarm{mod: mod, alloc: mod.ExportedFunction("toolhost_alloc"), call: mod.ExportedFunction("toolhost_call")}, tool, args)
}

func readPacked(mem api.Memory, packed uint64) ([]byte, error) {
	ptr, n := abi.Unpack(packed)
	b, ok := mem.Read(ptr, n)
	if !ok {
		return nil, fmt.Errorf("response out of range")
	}
	return append([]byte(nil), b...), nil
}
