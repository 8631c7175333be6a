package host_test

import (
	"context"
	"crypto/rand"
	"strings"
	"testing"
	"time"

	"github.com/toolhost/toolhost/internal/testwasm"
	"github.com/toolhost/toolhost/third_party/wazero"
	"github.com/toolhost/toolhost/third_party/wazero/imports/wasi_snapshot_preview1"
)

// BenchmarkDeadlineCost is what hard deadlines cost guest compute:
// hash.sha256 of 256 KiB in a warm instance (instantiated once, called
// b.N times) through plain wazero, with close-on-context-done on (as
// toolhost runs every module) and off (no termination checks at all, the
// floor). Each call has a deadline, as a toolhost call does. Compare the
// two, and the same benchmark before and after third_party/wazero.patch,
// in one interleaved run (docs/BENCHMARKS.md has the command).
func BenchmarkDeadlineCost(b *testing.B) {
	wasm := testwasm.Go(b, "./tools-src/hashtools")
	args := []byte(`{"text":"` + strings.Repeat("a", 256<<10) + `"}`)
	const want = `{"result":{"hex":"`
	for _, on := range []bool{true, false} {
		name := "close-on-done=off"
		if on {
			name = "close-on-done=on"
		}
		b.Run(name, func(b *testing.B) {
			ctx := context.Background()
			rt := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfigCompiler().
				WithCloseOnContextDone(on).WithCompilationCache(benchCache(b)))
			b.Cleanup(func() { rt.Close(ctx) })
			wasi_snapshot_preview1.MustInstantiate(ctx, rt)
			r := &rawRuntime{rt: rt, cfg: wazero.NewModuleConfig().WithName("").
				WithStartFunctions("_initialize").WithSysWalltime().WithSysNanotime().
				WithRandSource(rand.Reader)}
			mod, err := rt.InstantiateModule(ctx, r.compile(b, wasm), r.cfg)
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				cctx, cancel := context.WithTimeout(ctx, time.Minute)
				res, err := r.callLive(cctx, mod, "hash.sha256", args)
				cancel()
				if err != nil || !strings.HasPrefix(string(res), want) {
					b.Fatalf("call = %.80s, %v; want %s...", res, err, want)
				}
			}
		})
	}
}

func benchCache(b testing.TB) wazero.CompilationCache {
	cache, err := wazero.NewCompilationCacheWithDir(cacheDir)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { cache.Close(context.Background()) })
	return cache
}
