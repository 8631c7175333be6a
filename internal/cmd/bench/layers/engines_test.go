//go:build unix

package layers_test

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"os"
	"runtime"
	"testing"
	"time"

	"github.com/toolhost/toolhost/abi"
	"github.com/toolhost/toolhost/internal/testkit/testwasm"
	"github.com/toolhost/toolhost/third_party/wazero"
	"github.com/toolhost/toolhost/third_party/wazero/imports/wasi_snapshot_preview1"
)

// BenchmarkColdFirstCall is a Go module's first call with nothing
// compiled: a new runtime with no cache compiles tools-src/text, makes an
// instance (_initialize) and calls text.count once. The compiler arm is
// what host does; the interpreter arm is wazero's interpreter, the
// candidate for answering a module's first calls while the compiler works
// (issue 26, target 3; docs/BENCHMARKS.md, "Issue 26, session 12").
// heap-MiB is what the compiled module holds on the Go heap.
//
//	go test -run '^$' -bench ColdFirstCall -benchtime 3x ./internal/cmd/bench/layers
func BenchmarkColdFirstCall(b *testing.B) {
	ctx := context.Background()
	wasm, err := os.ReadFile(testwasm.Go(b, "./tools-src/text"))
	if err != nil {
		b.Fatal(err)
	}
	for _, arm := range []struct {
		name   string
		config func() wazero.RuntimeConfig
	}{
		{"compiler", wazero.NewRuntimeConfigCompiler},
		{"interpreter", wazero.NewRuntimeConfigInterpreter},
	} {
		b.Run(arm.name, func(b *testing.B) {
			firstCall := func(measure bool) float64 {
				rt := wazero.NewRuntimeWithConfig(ctx, arm.config().WithCloseOnContextDone(true))
				defer rt.Close(ctx)
				wasi_snapshot_preview1.MustInstantiate(ctx, rt)
				var before runtime.MemStats
				if measure {
					runtime.GC()
					runtime.ReadMemStats(&before)
				}
				c, err := rt.CompileModule(ctx, wasm)
				if err != nil {
					b.Fatal(err)
				}
				heap := 0.0
				if measure {
					var after runtime.MemStats
					runtime.GC()
					runtime.ReadMemStats(&after)
					heap = float64(int64(after.HeapAlloc)-int64(before.HeapAlloc)) / (1 << 20)
				}
				mod, err := rt.InstantiateModule(ctx, c, wazero.NewModuleConfig().WithName("").
					WithStartFunctions("_initialize").WithSysWalltime().WithSysNanotime().WithRandSource(rand.Reader))
				if err != nil {
					b.Fatal(err)
				}
				w := &rawWarm{mod: mod, alloc: mod.ExportedFunction("toolhost_alloc"), fn: mod.ExportedFunction("toolhost_call")}
				res, err := w.call(ctx, []byte(args))
				if err != nil || string(res) != `{"result":`+want+`}` {
					b.Fatalf("first call = %s, %v", res, err)
				}
				return heap
			}
			heap := firstCall(true)
			cpu := processCPU()
			for b.Loop() {
				firstCall(false)
			}
			b.ReportMetric(float64(processCPU()-cpu)/float64(b.N), "cpu-ns/op")
			b.ReportMetric(heap, "heap-MiB")
		})
	}
}

// BenchmarkInterpretedForm is what host's interpreted form of a cold Go
// module does before its first call answers (host/interp.go), on plain
// wazero: compile tools-src/text on the interpreter, check its manifest
// with toolhost_describe in one instance, then make the call in a fresh
// one. describe-ms is the instance and describe, the part the guest SDK's
// describe decides (docs/BENCHMARKS.md, "Issue 26, session 14").
//
//	go test -run '^$' -bench InterpretedForm -benchtime 5x ./internal/cmd/bench/layers
func BenchmarkInterpretedForm(b *testing.B) {
	ctx := context.Background()
	wasm, err := os.ReadFile(testwasm.Go(b, "./tools-src/text"))
	if err != nil {
		b.Fatal(err)
	}
	config := wazero.NewModuleConfig().WithName("").WithStartFunctions("_initialize").
		WithSysWalltime().WithSysNanotime().WithRandSource(rand.Reader)
	var describing time.Duration
	cpu := processCPU()
	for b.Loop() {
		rt := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfigInterpreter().WithCloseOnContextDone(true))
		wasi_snapshot_preview1.MustInstantiate(ctx, rt)
		c, err := rt.CompileModule(ctx, wasm)
		if err != nil {
			b.Fatal(err)
		}
		start := time.Now()
		check, err := rt.InstantiateModule(ctx, c, config)
		if err != nil {
			b.Fatal(err)
		}
		res, err := check.ExportedFunction(abi.ExportDescribe).Call(ctx)
		if err != nil {
			b.Fatal(err)
		}
		ptr, n := abi.Unpack(res[0])
		if m, ok := check.Memory().Read(ptr, n); !ok || !json.Valid(m) {
			b.Fatalf("describe wrote %d bytes at %d, not a manifest", n, ptr)
		}
		describing += time.Since(start)
		_ = check.Close(ctx)
		mod, err := rt.InstantiateModule(ctx, c, config)
		if err != nil {
			b.Fatal(err)
		}
		w := &rawWarm{mod: mod, alloc: mod.ExportedFunction("toolhost_alloc"), fn: mod.ExportedFunction("toolhost_call")}
		if out, err := w.call(ctx, []byte(args)); err != nil || string(out) != `{"result":`+want+`}` {
			b.Fatalf("first call = %s, %v", out, err)
		}
		_ = rt.Close(ctx)
	}
	b.ReportMetric(float64(processCPU()-cpu)/float64(b.N), "cpu-ns/op")
	b.ReportMetric(describing.Seconds()*1000/float64(b.N), "describe-ms")
}
