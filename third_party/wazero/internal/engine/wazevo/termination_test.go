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

// recursionModule imports env.ready and exports fib(n), the doubly recursive Fibonacci number with
// no loop anywhere, and run(n), which calls ready and then returns fib(n): code that only the
// function-entry termination check can stop.
var recursionModule = binaryencoding.EncodeModule(&wasm.Module{
	TypeSection: []wasm.FunctionType{
		{},
		{Params: []wasm.ValueType{i32}, Results: []wasm.ValueType{i32}, ParamNumInUint64: 1, ResultNumInUint64: 1},
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
		{Body: []byte{
			wasm.OpcodeCall, 0,
			wasm.OpcodeLocalGet, 0, wasm.OpcodeCall, 1,
			wasm.OpcodeEnd,
		}},
	},
	ExportSection: []wasm.Export{
		{Name: "fib", Type: wasm.ExternTypeFunc, Index: 1},
		{Name: "run", Type: wasm.ExternTypeFunc, Index: 2},
	},
})

// instantiateRecursion is instantiateTermination for recursionModule.
func instantiateRecursion(t *testing.T, onReady func(ctx context.Context, m api.Module)) api.Module {
	ctx := context.Background()
	r := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfigCompiler().WithCloseOnContextDone(true))
	t.Cleanup(func() { require.NoError(t, r.Close(ctx)) })
	_, err := r.NewHostModuleBuilder("env").NewFunctionBuilder().
		WithFunc(func(ctx context.Context, m api.Module) { onReady(ctx, m) }).Export("ready").
		Instantiate(ctx)
	require.NoError(t, err)
	m, err := r.Instantiate(ctx, recursionModule)
	require.NoError(t, err)
	return m
}

// fibHuge is an argument for which fib runs for hours (about 1.6 fib(n) calls): a call that
// returns at all was stopped.
const fibHuge = 70

// TestE2E_ensureTermination_recursionRunsToCompletion makes about 240,000 calls, several times
// wasm.TerminationEpochStep, so the recursion exits to Go at function entries on the way and
// goes on with its arguments intact.
func TestE2E_ensureTermination_recursionRunsToCompletion(t *testing.T) {
	m := instantiateRecursion(t, func(context.Context, api.Module) {})
	res, err := m.ExportedFunction("fib").Call(context.Background(), 25)
	require.NoError(t, err)
	require.Equal(t, uint64(75025), res[0])
}

// TestE2E_ensureTermination_recursionCancel stops recursion without a loop when its call's
// context is canceled. Before function entries were checked it ran on for hours.
func TestE2E_ensureTermination_recursionCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	m := instantiateRecursion(t, func(context.Context, api.Module) { cancel() })
	_, err := m.ExportedFunction("run").Call(ctx, fibHuge)
	requireExitCode(t, err, sys.ExitCodeContextCanceled)
}

// TestE2E_ensureTermination_recursionClose stops recursion without a loop when its module is
// closed by another goroutine.
func TestE2E_ensureTermination_recursionClose(t *testing.T) {
	m := instantiateRecursion(t, func(ctx context.Context, m api.Module) {
		go func() { _ = m.CloseWithExitCode(ctx, 7) }()
	})
	_, err := m.ExportedFunction("run").Call(context.Background(), fibHuge)
	requireExitCode(t, err, 7)
}

// TestE2E_ensureTermination_recursionGC runs a stop-the-world GC while a recursion without a
// loop runs: it only ends because function entries exit to Go periodically.
func TestE2E_ensureTermination_recursionGC(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	m := instantiateRecursion(t, func(context.Context, api.Module) {
		go func() {
			runtime.GC()
			runtime.GC()
			cancel()
		}()
	})
	_, err := m.ExportedFunction("run").Call(ctx, fibHuge)
	requireExitCode(t, err, sys.ExitCodeContextCanceled)
}

// unwindModule imports env.ready and exports f(n): at n == 0 it calls ready and returns 0,
// otherwise it returns f(n-1) run through 20,000 multiply-adds, a 120 KB tail after its recursive
// call that each frame runs on the way back up.
var unwindModule = func() []byte {
	body := []byte{
		wasm.OpcodeLocalGet, 0, wasm.OpcodeI32Eqz,
		wasm.OpcodeIf, 0x40, wasm.OpcodeCall, 0, wasm.OpcodeI32Const, 0, wasm.OpcodeReturn, wasm.OpcodeEnd,
		wasm.OpcodeLocalGet, 0, wasm.OpcodeI32Const, 1, wasm.OpcodeI32Sub, wasm.OpcodeCall, 1,
	}
	for range 20_000 {
		body = append(body, wasm.OpcodeI32Const, 3, wasm.OpcodeI32Mul, wasm.OpcodeI32Const, 1, wasm.OpcodeI32Add)
	}
	return binaryencoding.EncodeModule(&wasm.Module{
		TypeSection: []wasm.FunctionType{
			{},
			{Params: []wasm.ValueType{i32}, Results: []wasm.ValueType{i32}, ParamNumInUint64: 1, ResultNumInUint64: 1},
		},
		ImportSection:       []wasm.Import{{Module: "env", Name: "ready", Type: wasm.ExternTypeFunc, DescFunc: 0}},
		ImportFunctionCount: 1,
		FunctionSection:     []wasm.Index{1},
		CodeSection:         []wasm.Code{{Body: append(body, wasm.OpcodeEnd)}},
		ExportSection:       []wasm.Export{{Name: "f", Type: wasm.ExternTypeFunc, Index: 1}},
	})
}()

// TestE2E_ensureTermination_unwind cancels a call at the bottom of a recursion 1,000,000 deep:
// the stack then unwinds through a long tail in every frame. Without a check after the call
// (returns are not checked) all of it ran unchecked: about 4 minutes, during which the goroutine
// could not be preempted either.
func TestE2E_ensureTermination_unwind(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	r := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfigCompiler().WithCloseOnContextDone(true))
	defer func() { require.NoError(t, r.Close(context.Background())) }()
	_, err := r.NewHostModuleBuilder("env").NewFunctionBuilder().
		WithFunc(func(context.Context, api.Module) { cancel() }).Export("ready").
		Instantiate(ctx)
	require.NoError(t, err)
	m, err := r.Instantiate(context.Background(), unwindModule)
	require.NoError(t, err)
	_, err = m.ExportedFunction("f").Call(ctx, 1_000_000)
	requireExitCode(t, err, sys.ExitCodeContextCanceled)
}
