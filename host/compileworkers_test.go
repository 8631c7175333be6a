package host_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/toolhost/toolhost/host/internal/compile"
	"github.com/toolhost/toolhost/internal/testkit/testwasm"
	"github.com/toolhost/toolhost/third_party/wazero"
	"github.com/toolhost/toolhost/third_party/wazero/experimental"
)

// TestCompileWorkersDeterministic: a module compiles on its share of the
// CPUs (compile.Running, compile.WithWorkers), and what lands in the file
// cache must be byte for byte what one goroutine compiles: the compile
// mark loads a module a child compiled before without compiling it again
// because compiling is deterministic, and a cache written by a server
// with another CPU count, or busier, must serve the same code.
func TestCompileWorkersDeterministic(t *testing.T) {
	procs := runtime.GOMAXPROCS(0)
	var r compile.Running
	ctx := context.Background()
	first, doneFirst := r.Begin(ctx)
	second, doneSecond := r.Begin(ctx)
	if first != procs || second != max(1, procs/2) {
		t.Fatalf("workers of a lone compile and of a second one at once = %d, %d; want %d, %d", first, second, procs, max(1, procs/2))
	}
	doneSecond()
	doneFirst()
	if again, done := r.Begin(ctx); again != procs {
		t.Fatalf("workers once the others are done = %d; want %d", again, procs)
	} else {
		done()
	}
	if got := experimental.GetCompilationWorkers(compile.WithWorkers(ctx, 3)); got != 3 {
		t.Fatalf("WithWorkers(3) asks for %d workers", got)
	}
	if compile.WithWorkers(ctx, 1) != ctx {
		t.Fatal("WithWorkers(1) changed the context; want one worker, wazero's default")
	}
	wasm, err := os.ReadFile(testwasm.C(t, "tools-src-c/wordfreq"))
	if err != nil {
		t.Fatal(err)
	}
	entry := func(workers int) []byte {
		ctx := context.Background()
		if workers > 1 {
			ctx = experimental.WithCompilationWorkers(ctx, workers)
		}
		dir := t.TempDir()
		cache, err := wazero.NewCompilationCacheWithDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		rt := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfigCompiler().WithCloseOnContextDone(true).WithCompilationCache(cache))
		defer rt.Close(ctx)
		if _, err := rt.CompileModule(ctx, wasm); err != nil {
			t.Fatal(err)
		}
		var files []string
		filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				files = append(files, p)
			}
			return nil
		})
		if len(files) != 1 {
			t.Fatalf("cache holds %v; want one entry", files)
		}
		b, err := os.ReadFile(files[0])
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	one, four := entry(1), entry(4)
	if !bytes.Equal(one, four) {
		t.Fatalf("the cache entry compiled on 4 goroutines (%d bytes) differs from one goroutine's (%d bytes)", len(four), len(one))
	}
}
