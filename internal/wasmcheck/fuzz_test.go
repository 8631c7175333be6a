package wasmcheck

import (
	"bytes"
	"context"
	"runtime"
	"testing"

	"github.com/toolhost/toolhost/third_party/wazero"
)

// FuzzCheckModule feeds arbitrary bytes through Check and, when it
// accepts them, through wazero's decoder and validator: Check never
// panics, is idempotent on what it returns, and what it lets through never
// makes wazero allocate more than a small multiple of the input (a miss
// here was a process-killing allocation). The seed corpus is in
// testdata/fuzz/FuzzCheckModule/: small valid modules, one per section
// kind, and the bombs of TestCheckModuleBombs.
func FuzzCheckModule(f *testing.F) {
	ctx := context.Background()
	rt := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfigInterpreter())
	f.Cleanup(func() { rt.Close(ctx) })
	f.Fuzz(func(t *testing.T, wasm []byte) {
		out, err := Check(wasm)
		if err != nil {
			return
		}
		if again, err := Check(out); err != nil || !bytes.Equal(again, out) {
			t.Fatalf("Check is not idempotent on % x: % x, %v", out, again, err)
		}
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		if c, err := rt.CompileModule(ctx, out); err == nil {
			c.Close(ctx)
		}
		runtime.ReadMemStats(&after)
		if grew := after.TotalAlloc - before.TotalAlloc; grew > 64<<20+4096*uint64(len(out)) {
			t.Fatalf("compiling %d checked bytes allocated %d bytes: % x", len(out), grew, out)
		}
	})
}
