package wazevo_test

import (
	"context"
	"errors"
	"runtime"
	"testing"

	"github.com/toolhost/toolhost/third_party/wazero"
	"github.com/toolhost/toolhost/third_party/wazero/api"
	"github.com/toolhost/toolhost/third_party/wazero/internal/testing/binaryencoding"
	"github.com/toolhost/toolhost/third_party/wazero/internal/testing/require"
	"github.com/toolhost/toolhost/third_party/wazero/internal/wasm"
	"github.com/toolhost/toolhost/third_party/wazero/sys"
)

// terminationModule imports env.ready and exports spin, which calls ready then loops forever,
// and count(n), which loops n times with the counter as the loop's parameter and returns 3*n.
var terminationModule = binaryencoding.EncodeModule(&wasm.Module{
	TypeSection: []wasm.FunctionType{
		{},
		{Params: []wasm.ValueType{i32}, Results: []wasm.ValueType{i32}, ParamNumInUint64: 1, ResultNumInUint64: 1},
	},
	ImportSection:       []wasm.Import{{Module: "env", Name: "ready", Type: wasm.ExternTypeFunc, DescFunc: 0}},
	ImportFunctionCount: 1,
	FunctionSection:     []wasm.Index{0, 1},
	CodeSection: []wasm.Code{
		{Body: []byte{
			wasm.OpcodeCall, 0,
			wasm.OpcodeLoop, 0x40, wasm.OpcodeBr, 0, wasm.OpcodeEnd,
			wasm.OpcodeEnd,
		}},
		{LocalTypes: []wasm.ValueType{i32, i32}, Body: []byte{
			wasm.OpcodeLocalGet, 0,
			wasm.OpcodeLoop, 1, // (param i32) (result i32)
			wasm.OpcodeLocalGet, 1, wasm.OpcodeI32Const, 3, wasm.OpcodeI32Add, wasm.OpcodeLocalSet, 1,
			wasm.OpcodeI32Const, 1, wasm.OpcodeI32Sub,
			wasm.OpcodeLocalTee, 2, wasm.OpcodeLocalGet, 2,
			wasm.OpcodeBrIf, 0,
			wasm.OpcodeEnd,
			wasm.OpcodeLocalGet, 1, wasm.OpcodeI32Add,
			wasm.OpcodeEnd,
		}},
	},
	ExportSection: []wasm.Export{
		{Name: "spin", Type: wasm.ExternTypeFunc, Index: 1},
		{Name: "count", Type: wasm.ExternTypeFunc, Index: 2},
	},
})

// instantiateTermination instantiates terminationModule with close-on-context-done, ready
// calling onReady.
func instantiateTermination(t *testing.T, onReady func(ctx context.Context, m api.Module)) api.Module {
	ctx := context.Background()
	r := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfigCompiler().WithCloseOnContextDone(true))
	t.Cleanup(func() { require.NoError(t, r.Close(ctx)) })
	_, err := r.NewHostModuleBuilder("env").NewFunctionBuilder().
		WithFunc(func(ctx context.Context, m api.Module) { onReady(ctx, m) }).Export("ready").
		Instantiate(ctx)
	require.NoError(t, err)
	m, err := r.Instantiate(ctx, terminationModule)
	require.NoError(t, err)
	return m
}

func requireExitCode(t *testing.T, err error, exp uint32) {
	var exitErr *sys.ExitError
	require.True(t, errors.As(err, &exitErr), "%v is not a sys.ExitError", err)
	require.Equal(t, exp, exitErr.ExitCode())
}

// TestE2E_ensureTermination_loopsRunToCompletion runs a loop for many more iterations than
// wasm.TerminationEpochStep, so it exits to Go on the way and goes on with its parameter intact.
func TestE2E_ensureTermination_loopsRunToCompletion(t *testing.T) {
	m := instantiateTermination(t, func(context.Context, api.Module) {})
	res, err := m.ExportedFunction("count").Call(context.Background(), 1_000_000)
	require.NoError(t, err)
	require.Equal(t, uint64(3_000_000), res[0])
}

// TestE2E_ensureTermination_cancel stops a loop when its call's context is canceled.
func TestE2E_ensureTermination_cancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	m := instantiateTermination(t, func(context.Context, api.Module) { cancel() })
	_, err := m.ExportedFunction("spin").Call(ctx)
	requireExitCode(t, err, sys.ExitCodeContextCanceled)
}

// TestE2E_ensureTermination_close stops a loop when its module is closed by another goroutine.
func TestE2E_ensureTermination_close(t *testing.T) {
	m := instantiateTermination(t, func(ctx context.Context, m api.Module) {
		go func() { _ = m.CloseWithExitCode(ctx, 7) }()
	})
	_, err := m.ExportedFunction("spin").Call(context.Background())
	requireExitCode(t, err, 7)
}

// TestE2E_ensureTermination_gc runs a stop-the-world GC while a loop spins: compiled code cannot
// be preempted asynchronously, so this only ends because the loop exits to Go periodically.
// (Without those exits the test hangs: not even its -timeout could fire during the stop-the-world.)
func TestE2E_ensureTermination_gc(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	m := instantiateTermination(t, func(context.Context, api.Module) {
		go func() {
			runtime.GC()
			runtime.GC()
			cancel()
		}()
	})
	_, err := m.ExportedFunction("spin").Call(ctx)
	requireExitCode(t, err, sys.ExitCodeContextCanceled)
}
