package wazero

import (
	"context"
	"testing"

	"github.com/tetratelabs/wazero/internal/testing/binaryencoding"
	"github.com/tetratelabs/wazero/internal/testing/require"
	"github.com/tetratelabs/wazero/internal/wasm"
)

// TestRuntime_CompileModule_FunctionsValidatedBefore: a module whose code
// the file cache holds is not validated function by function again, and
// runs; one compiled afresh is, and so is any module the interpreter runs.
func TestRuntime_CompileModule_FunctionsValidatedBefore(t *testing.T) {
	ctx := context.Background()
	bin := binaryencoding.EncodeModule(&wasm.Module{
		TypeSection:     []wasm.FunctionType{{Results: []wasm.ValueType{wasm.ValueTypeI32}, ResultNumInUint64: 1}},
		FunctionSection: []wasm.Index{0},
		CodeSection:     []wasm.Code{{Body: []byte{wasm.OpcodeI32Const, 42, wasm.OpcodeEnd}}},
		ExportSection:   []wasm.Export{{Name: "f", Type: wasm.ExternTypeFunc, Index: 0}},
	})
	cache, err := NewCompilationCacheWithDir(t.TempDir())
	require.NoError(t, err)
	compile := func(rc RuntimeConfig) (Runtime, *compiledModule) {
		r := NewRuntimeWithConfig(ctx, rc)
		t.Cleanup(func() { _ = r.Close(ctx) })
		c, err := r.CompileModule(ctx, bin)
		require.NoError(t, err)
		return r, c.(*compiledModule)
	}
	_, first := compile(NewRuntimeConfigCompiler().WithCompilationCache(cache))
	require.False(t, first.module.FunctionsValidatedBefore)

	r, again := compile(NewRuntimeConfigCompiler().WithCompilationCache(cache))
	require.True(t, again.module.FunctionsValidatedBefore)
	mod, err := r.InstantiateModule(ctx, again, NewModuleConfig())
	require.NoError(t, err)
	res, err := mod.ExportedFunction("f").Call(ctx)
	require.NoError(t, err)
	require.Equal(t, uint64(42), res[0])

	_, interpreted := compile(NewRuntimeConfigInterpreter().WithCompilationCache(cache))
	require.False(t, interpreted.module.FunctionsValidatedBefore)
}
