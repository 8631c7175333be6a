//go:build unix

package layers_test

import (
	"context"
	"crypto/rand"
	"os"
	"runtime"
	"testing"

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
