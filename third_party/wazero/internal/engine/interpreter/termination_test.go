package interpreter_test

import (
	"context"
	"errors"
	"testing"

	"github.com/toolhost/toolhost/third_party/wazero"
	"github.com/toolhost/toolhost/third_party/wazero/api"
	"github.com/toolhost/toolhost/third_party/wazero/internal/testing/binaryencoding"
	"github.com/toolhost/toolhost/third_party/wazero/internal/testing/require"
	"github.com/toolhost/toolhost/third_party/wazero/internal/wasm"
	"github.com/toolhost/toolhost/third_party/wazero/sys"
)

// recursionModule imports env.ready and exports run(n), which calls ready and then returns the
// doubly recursive fib(n): no loop anywhere, so only a check at function entries stops it.
var recursionModule = binaryencoding.EncodeModule(&wasm.Module{
	TypeSection: []wasm.FunctionType{
		{},
		{Params: []wasm.ValueType{wasm.ValueTypeI32}, Results: []wasm.ValueType{wasm.ValueTypeI32}, ParamNumInUint64: 1, ResultNumInUint64: 1},
	},
	ImportSection:       []wasm.Import{{Module: "env", Name: "ready", Type: wasm.ExternTypeFunc, DescFunc: 0}},
	ImportFunctionCount: 1,
	FunctionSection:     []wasm.Index{1, 1},
	CodeSection: []wasm.Code{
		{Body: []byte{
			wasm.OpcodeLocalGet, 0, wasm.OpcodeI32Const, 2, wasm.OpcodeI32LtS,
			wasm.OpcodeIf, 0x40, wasm.OpcodeLocalGet, 0, wasm.OpcodeReturn, wasm.OpcodeEnd,
			wasm.OpcodeLocalGet, 0, wasm.OpcodeI32Const, 1, wasm.OpcodeI32Sub, wasm.OpcodeCall, 1,
			wasm.OpcodeLocalGet, 0, wasm.OpcodeI32Const, 2, wasm.OpcodeI32Sub, wasm.OpcodeCall, 1,
			wasm.OpcodeI32Add,
			wasm.OpcodeEnd,
		}},
		{Body: []byte{wasm.OpcodeCall, 0, wasm.OpcodeLocalGet, 0, wasm.OpcodeCall, 1, wasm.OpcodeEnd}},
	},
	ExportSection: []wasm.Export{
		{Name: "fib", Type: wasm.ExternTypeFunc, Index: 1},
		{Name: "run", Type: wasm.ExternTypeFunc, Index: 2},
	},
})

func instantiateRecursion(t *testing.T, onReady func()) api.Module {
	ctx := context.Background()
	r := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfigInterpreter().WithCloseOnContextDone(true))
	t.Cleanup(func() { require.NoError(t, r.Close(ctx)) })
	_, err := r.NewHostModuleBuilder("env").NewFunctionBuilder().WithFunc(onReady).Export("ready").Instantiate(ctx)
	require.NoError(t, err)
	m, err := r.Instantiate(ctx, recursionModule)
	require.NoError(t, err)
	return m
}

// TestInterpreter_ensureTermination_recursion: with close-on-context-done the interpreter, too,
// stops recursion without a loop when the call's context is canceled (before, fib(70) ran for
// hours), and the check does not change what the recursion computes.
func TestInterpreter_ensureTermination_recursion(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	m := instantiateRecursion(t, cancel)
	res, err := m.ExportedFunction("fib").Call(context.Background(), 20)
	require.NoError(t, err)
	require.Equal(t, uint64(6765), res[0])

	_, err = m.ExportedFunction("run").Call(ctx, 70)
	var exitErr *sys.ExitError
	require.True(t, errors.As(err, &exitErr), "%v is not a sys.ExitError", err)
	require.Equal(t, sys.ExitCodeContextCanceled, exitErr.ExitCode())
}
