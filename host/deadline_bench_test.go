package host_test

import (
	"context"
	"crypto/rand"
	"strings"
	"testing"
	"time"

	"github.com/toolhost/toolhost/internal/testkit/testwasm"
	"github.com/toolhost/toolhost/third_party/wazero"
	"github.com/toolhost/toolhost/third_party/wazero/imports/wasi_snapshot_preview1"
)

// BenchmarkDeadlineCost is what hard deadlines cost guest compute, on
// three workloads: hash.sha256 of 256 KiB in the Go SDK (loops: the check
// at loop headers) and fib(30) by recursion without a loop in WAT and in C
// through a function pointer (about 2.7 million calls: the check at
// function entries). Each runs in a warm instance (instantiated once,
// called b.N times) through plain wazero, with close-on-context-done on
// (as toolhost runs every module: every termination check compiled in) and
// off (no termination checks at all, the floor). Each call has a deadline,
// as a toolhost call does. The arms of one workload run one after the
// other, so -count=N interleaves them (docs/BENCHMARKS.md has the command).
func BenchmarkDeadlineCost(b *testing.B) {
	sha := func(b *testing.B) string { return testwasm.Go(b, "./tools-src/hashtools") }
	fibArgs, fibWant := []byte(`{"n":30}`), `{"result":832040}`
	for _, w := range []struct {
		name, tool string
		wasm       func(*testing.B) string
		args       []byte
		want       string
	}{
		{"sha256", "hash.sha256", sha, []byte(`{"text":"` + strings.Repeat("a", 256<<10) + `"}`), `{"result":{"hex":"`},
		{"fib-wat", "wat.fib", func(b *testing.B) string { return watPath(b, "fib") }, fibArgs, fibWant},
		{"fib-c", "c.fib", func(b *testing.B) string { return testwasm.C(b, "host/testdata/cfib") }, fibArgs, fibWant},
	} {
		for _, on := range []bool{true, false} {
			name := w.name + "/close-on-done=off"
			if on {
				name = w.name + "/close-on-done=on"
			}
			b.Run(name, func(b *testing.B) {
				deadlineCostArm(b, on, w.wasm(b), w.tool, w.args, w.want)
			})
		}
	}
}

// deadlineCostArm calls tool in one warm instance of wasm b.N times.
func deadlineCostArm(b *testing.B, closeOnDone bool, wasm, tool string, args []byte, want string) {
	ctx := context.Background()
	rt := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfigCompiler().
		WithCloseOnContextDone(closeOnDone).WithCompilationCache(benchCache(b)))
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
	cpu := processCPU()
	for b.Loop() {
		cctx, cancel := context.WithTimeout(ctx, time.Minute)
		res, err := r.callLive(cctx, mod, tool, args)
		cancel()
		if err != nil || !strings.HasPrefix(string(res), want) {
			b.Fatalf("call = %.80s, %v; want %s...", res, err, want)
		}
	}
	// On a shared machine the process's CPU time per call varies far less
	// than the wall clock's time.
	b.ReportMetric(float64(processCPU()-cpu)/float64(b.N), "cpu-ns/op")
}

func benchCache(b testing.TB) wazero.CompilationCache {
	cache, err := wazero.NewCompilationCacheWithDir(cacheDir)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { cache.Close(context.Background()) })
	return cache
}
