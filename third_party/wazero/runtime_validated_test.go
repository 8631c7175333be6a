package wazero

import (
	"context"
	"errors"
	"testing"

	"github.com/toolhost/toolhost/third_party/wazero/experimental"

	"github.com/toolhost/toolhost/third_party/wazero/internal/testing/binaryencoding"
	"github.com/toolhost/toolhost/third_party/wazero/internal/testing/require"
	"github.com/toolhost/toolhost/third_party/wazero/internal/wasm"
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

// vanishingEngine holds, it says, compiled code for every module, and then
// has none when asked to load it: what the engine sees when a file cache
// entry is removed between the runtime's check and the engine's load.
type vanishingEngine struct {
	wasm.Engine
	skipped int // CompileModule calls for a module marked FunctionsValidatedBefore
}

func (*vanishingEngine) HasCompiledModule(*wasm.Module) bool { return true }

func (v *vanishingEngine) CompileModule(ctx context.Context, m *wasm.Module, l []experimental.FunctionListener, ensureTermination bool) error {
	if m.FunctionsValidatedBefore {
		v.skipped++
		return wasm.ErrValidationSkippedCodeGone
	}
	return v.Engine.CompileModule(ctx, m, l, ensureTermination)
}

// TestRuntime_CompileModule_CodeGoneValidates: when the code that let
// validation be skipped is gone, CompileModule validates and compiles
// instead of failing, so a caller never has to recognise the case; and a
// module whose bodies are invalid is refused for them, never compiled
// unvalidated.
func TestRuntime_CompileModule_CodeGoneValidates(t *testing.T) {
	ctx := context.Background()
	module := func(body []byte) []byte {
		return binaryencoding.EncodeModule(&wasm.Module{
			TypeSection:     []wasm.FunctionType{{Results: []wasm.ValueType{wasm.ValueTypeI32}, ResultNumInUint64: 1}},
			FunctionSection: []wasm.Index{0},
			CodeSection:     []wasm.Code{{Body: body}},
			ExportSection:   []wasm.Export{{Name: "f", Type: wasm.ExternTypeFunc, Index: 0}},
		})
	}
	r := NewRuntimeWithConfig(ctx, NewRuntimeConfigCompiler())
	t.Cleanup(func() { _ = r.Close(ctx) })
	v := &vanishingEngine{Engine: r.(*runtime).store.Engine}
	r.(*runtime).store.Engine = v

	c, err := r.CompileModule(ctx, module([]byte{wasm.OpcodeI32Const, 42, wasm.OpcodeEnd}))
	require.NoError(t, err)
	require.Equal(t, 1, v.skipped)
	require.False(t, c.(*compiledModule).module.FunctionsValidatedBefore)
	mod, err := r.InstantiateModule(ctx, c, NewModuleConfig())
	require.NoError(t, err)
	res, err := mod.ExportedFunction("f").Call(ctx)
	require.NoError(t, err)
	require.Equal(t, uint64(42), res[0])

	// f must return an i32 and returns nothing.
	_, err = r.CompileModule(ctx, module([]byte{wasm.OpcodeEnd}))
	require.Error(t, err)
	require.Equal(t, 2, v.skipped)
	require.False(t, errors.Is(err, wasm.ErrValidationSkippedCodeGone), err.Error())
}
