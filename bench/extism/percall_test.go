// Package extism compares one tool call across hosts in one benchmark:
// plain wazero (fresh and warm instances), toolhost (fresh, and the
// dispatcher on top), Extism's go-sdk (fresh and reused instances) on an
// equivalent plugin, and toolhost's guests (Go SDK, a minimal hand-written
// Go reactor, C, a bare WAT reactor). It is a module of its own so that Extism never enters
// toolhost's dependencies; `make bench-percall` builds the plugins and
// runs it.
package extism

import (
	"context"
	"crypto/rand"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	extism "github.com/extism/go-sdk"
	stockwazero "github.com/tetratelabs/wazero"
	"github.com/toolhost/toolhost/abi"
	"github.com/toolhost/toolhost/dispatcher"
	"github.com/toolhost/toolhost/host"
	"github.com/toolhost/toolhost/loader"
	"github.com/toolhost/toolhost/registry"
	"github.com/toolhost/toolhost/third_party/wazero"
	"github.com/toolhost/toolhost/third_party/wazero/api"
	"github.com/toolhost/toolhost/third_party/wazero/imports/wasi_snapshot_preview1"
)

const (
	countArgs = `{"text":"the cat and the hat"}`
	countWant = `{"words":5,"lines":1,"runes":19,"bytes":19}`
)

// wasmPath is a module built by `make plugins` / `make bench-percall`
// (ROOT is the repository; the default is two folders up).
func wasmPath(b *testing.B, rel string) string {
	root := os.Getenv("ROOT")
	if root == "" {
		root = "../.."
	}
	p := filepath.Join(root, rel)
	if _, err := os.Stat(p); err != nil {
		b.Skipf("%s missing (run make bench-percall): %v", p, err)
	}
	return p
}

func BenchmarkPerCall(b *testing.B) {
	ctx := context.Background()
	cache := b.TempDir()
	rt, err := host.New(ctx, host.Config{CacheDir: cache, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { rt.Close(ctx) })
	load := func(path string) *host.Module {
		m, err := rt.LoadFile(ctx, path)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { m.Close(ctx) })
		return m
	}
	bench := func(name string, call func() ([]byte, error), want string) {
		b.Run(name, func(b *testing.B) {
			if _, err := call(); err != nil { // instance set-up, first-call lazies
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				res, err := call()
				if err != nil || string(res) != want {
					b.Fatalf("call = %s, %v; want %s", res, err, want)
				}
			}
		})
	}

	textPath := wasmPath(b, "plugins/text.wasm")
	args := []byte(countArgs)

	// Plain wazero, configured as host.New configures it.
	raw := newRaw(b, cache)
	textRaw := raw.compile(b, textPath)
	bench("raw-wazero-fresh", func() ([]byte, error) {
		mod, err := raw.rt.InstantiateModule(ctx, textRaw, raw.cfg)
		if err != nil {
			return nil, err
		}
		defer mod.Close(ctx)
		return rawCall(ctx, mod, mod.ExportedFunction("toolhost_alloc"), mod.ExportedFunction("toolhost_call"), "text.count", args)
	}, `{"result":`+countWant+`}`)
	live, err := raw.rt.InstantiateModule(ctx, textRaw, raw.cfg)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { live.Close(ctx) })
	liveAlloc, liveCall := live.ExportedFunction("toolhost_alloc"), live.ExportedFunction("toolhost_call")
	bench("raw-wazero-warm", func() ([]byte, error) {
		return rawCall(ctx, live, liveAlloc, liveCall, "text.count", args)
	}, `{"result":`+countWant+`}`)

	// toolhost: the Go SDK guest in a fresh instance, then with the
	// registry record, schema validation and dispatcher policies.
	text := load(textPath)
	bench("toolhost-fresh", func() ([]byte, error) { return text.Call(ctx, "text.count", args, host.Limits{}) }, countWant)
	bench("toolhost-reuse", func() ([]byte, error) {
		return text.Do(ctx, host.Request{Tool: "text.count", Args: args, Reuse: true})
	}, countWant)
	d := dispatcherFor(b, text, "text.count")
	bench("dispatcher+toolhost-reuse", func() ([]byte, error) {
		return d.Call(ctx, dispatcher.Call{Tool: "text.count", Args: args})
	}, countWant)

	// Extism on the same work: plugin/ is text.count with go-pdk.
	ext := extismPlugin(b, ctx, wasmPath(b, "bin/extism-count.wasm"))
	bench("extism-fresh", func() ([]byte, error) {
		p, err := ext.Instance(ctx, extism.PluginInstanceConfig{})
		if err != nil {
			return nil, err
		}
		defer p.Close(ctx)
		return extismCall(p, args)
	}, countWant)
	reused, err := ext.Instance(ctx, extism.PluginInstanceConfig{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { reused.Close(ctx) })
	bench("extism-reused", func() ([]byte, error) { return extismCall(reused, args) }, countWant)

	// toolhost's other guests, fresh: the same text.count as a minimal
	// hand-written Go reactor (host/testdata/minimal, no abi/guest), C (abi/c) and a
	// bare WAT reactor.
	minimal := load(wasmPath(b, "bin/reactor-count.wasm"))
	bench("toolhost-fresh-go-minimal-reactor", func() ([]byte, error) {
		return minimal.Call(ctx, "text.count", args, host.Limits{})
	}, countWant)
	wordfreq := load(wasmPath(b, "plugins/wordfreq.wasm"))
	bench("toolhost-fresh-c-wordfreq", func() ([]byte, error) {
		return wordfreq.Call(ctx, "wordfreq.top", []byte(`{"text":"the cat and the hat","top":1}`), host.Limits{})
	}, `{"words":5,"unique":4,"top":[{"word":"the","count":2}]}`)
	echo := load(wasmPath(b, "host/testdata/wat/echo.wasm"))
	bench("toolhost-fresh-wat-reactor", func() ([]byte, error) {
		return echo.Call(ctx, "wat.echo", []byte(`{}`), host.Limits{})
	}, `{}`)
}

func dispatcherFor(b *testing.B, m *host.Module, tool string) *dispatcher.Dispatcher {
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

func extismPlugin(b *testing.B, ctx context.Context, path string) *extism.CompiledPlugin {
	wasm, err := os.ReadFile(path)
	if err != nil {
		b.Fatal(err)
	}
	p, err := extism.NewCompiledPlugin(ctx, extism.Manifest{Wasm: []extism.Wasm{extism.WasmData{Data: wasm}}},
		extism.PluginConfig{EnableWasi: true,
			RuntimeConfig: stockwazero.NewRuntimeConfigCompiler().WithCloseOnContextDone(true)}, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { p.Close(ctx) })
	return p
}

func extismCall(p *extism.Plugin, args []byte) ([]byte, error) {
	rc, out, err := p.Call("count", args)
	if err != nil {
		return nil, err
	}
	if rc != 0 {
		return nil, fmt.Errorf("count returned %d", rc)
	}
	return out, nil
}

// raw is wazero as host.New configures it: the compiler, the file cache,
// close on context done, WASI preview 1, real clocks and randomness,
// _initialize as the start function.
type raw struct {
	rt  wazero.Runtime
	cfg wazero.ModuleConfig
}

func newRaw(b *testing.B, dir string) *raw {
	ctx := context.Background()
	cache, err := wazero.NewCompilationCacheWithDir(dir)
	if err != nil {
		b.Fatal(err)
	}
	rt := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfigCompiler().
		WithCloseOnContextDone(true).WithCompilationCache(cache))
	wasi_snapshot_preview1.MustInstantiate(ctx, rt)
	b.Cleanup(func() { rt.Close(ctx); cache.Close(ctx) })
	return &raw{rt: rt, cfg: wazero.NewModuleConfig().WithName("").WithStartFunctions("_initialize").
		WithSysWalltime().WithSysNanotime().WithRandSource(rand.Reader)}
}

func (r *raw) compile(b *testing.B, path string) wazero.CompiledModule {
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

// rawCall writes the name and arguments with toolhost_alloc, calls
// toolhost_call and copies the response out: the ABI's steps, no host code.
func rawCall(ctx context.Context, mod api.Module, alloc, call api.Function, tool string, args []byte) ([]byte, error) {
	write := func(b []byte) (uint32, error) {
		res, err := alloc.Call(ctx, uint64(len(b)))
		if err != nil {
			return 0, err
		}
		if !mod.Memory().Write(uint32(res[0]), b) {
			return 0, fmt.Errorf("alloc out of range")
		}
		return uint32(res[0]), nil
	}
	namePtr, err := write([]byte(tool))
	if err != nil {
		return nil, err
	}
	argsPtr, err := write(args)
	if err != nil {
		return nil, err
	}
	res, err := call.Call(ctx, uint64(namePtr), uint64(len(tool)), uint64(argsPtr), uint64(len(args)))
	if err != nil {
		return nil, err
	}
	ptr, n := abi.Unpack(res[0])
	out, ok := mod.Memory().Read(ptr, n)
	if !ok {
		return nil, fmt.Errorf("response out of range")
	}
	return append([]byte(nil), out...), nil
}
