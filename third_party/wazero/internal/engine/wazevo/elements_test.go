package wazevo_test

import (
	"context"
	"fmt"
	"runtime"
	"testing"

	"github.com/toolhost/toolhost/third_party/wazero"
	"github.com/toolhost/toolhost/third_party/wazero/internal/leb128"
	"github.com/toolhost/toolhost/third_party/wazero/internal/testing/binaryencoding"
	"github.com/toolhost/toolhost/third_party/wazero/internal/testing/require"
	"github.com/toolhost/toolhost/third_party/wazero/internal/wasm"
)

// tableModule has n functions, function i returning i, a table holding
// them all in reverse order (from two element segments, the second one
// ending with extra more references to function 7), and call(i) =
// table[i]().
func tableModule(n, extra int) []byte {
	m := &wasm.Module{
		TypeSection: []wasm.FunctionType{
			{Results: []wasm.ValueType{i32}, ResultNumInUint64: 1},
			{Params: []wasm.ValueType{i32}, Results: []wasm.ValueType{i32}, ParamNumInUint64: 1, ResultNumInUint64: 1},
		},
		TableSection:  []wasm.Table{{Min: uint32(n + extra), Type: wasm.RefTypeFuncref}},
		ExportSection: []wasm.Export{{Name: "call", Type: wasm.ExternTypeFunc, Index: uint32(n)}},
	}
	var first, second []wasm.ConstantExpression
	for i := range n {
		m.FunctionSection = append(m.FunctionSection, 0)
		body := append([]byte{wasm.OpcodeI32Const}, leb128.EncodeInt32(int32(i))...)
		m.CodeSection = append(m.CodeSection, wasm.Code{Body: append(body, wasm.OpcodeEnd)})
		ref := wasm.NewConstantExpressionFromOpcode(wasm.OpcodeRefFunc, leb128.EncodeUint32(uint32(n-1-i)))
		if i < n/2 {
			first = append(first, ref)
		} else {
			second = append(second, ref)
		}
	}
	for range extra {
		second = append(second, wasm.NewConstantExpressionFromOpcode(wasm.OpcodeRefFunc, leb128.EncodeUint32(7)))
	}
	m.FunctionSection = append(m.FunctionSection, 1)
	m.CodeSection = append(m.CodeSection, wasm.Code{Body: []byte{
		wasm.OpcodeLocalGet, 0, wasm.OpcodeCallIndirect, 0, 0, wasm.OpcodeEnd,
	}})
	m.ElementSection = []wasm.ElementSegment{
		{OffsetExpr: wasm.NewConstantExpressionFromI32(0), Init: first, Type: wasm.RefTypeFuncref, Mode: wasm.ElementModeActive},
		{OffsetExpr: wasm.NewConstantExpressionFromI32(int32(n / 2)), Init: second, Type: wasm.RefTypeFuncref, Mode: wasm.ElementModeActive},
	}
	return binaryencoding.EncodeModule(m)
}

// TestE2E_tableReferencesOfManyFunctions: table references point into the
// chunks of function instances an instance makes (FunctionInstanceReference),
// so every entry must call its own function in every instance, after the
// chunks filled up and after a GC, and with other instances closed. The
// first chunk holds as many as the element segments have items, up to the
// function count: one chunk for a table naming each function once, more
// for one naming them several times.
func TestE2E_tableReferencesOfManyFunctions(t *testing.T) {
	for _, extra := range []int{1, 3000} {
		t.Run(fmt.Sprint("extra=", extra), func(t *testing.T) { tableReferences(t, 1000, extra) })
	}
}

func tableReferences(t *testing.T, n, extra int) {
	ctx := context.Background()
	r := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfigCompiler())
	defer r.Close(ctx)
	c, err := r.CompileModule(ctx, tableModule(n, extra))
	require.NoError(t, err)
	for round := range 3 {
		a, err := r.InstantiateModule(ctx, c, wazero.NewModuleConfig().WithName(""))
		require.NoError(t, err)
		b, err := r.InstantiateModule(ctx, c, wazero.NewModuleConfig().WithName(""))
		require.NoError(t, err)
		require.NoError(t, a.Close(ctx))
		runtime.GC()
		call := b.ExportedFunction("call")
		for i := range n {
			res, err := call.Call(ctx, uint64(i))
			require.NoError(t, err)
			require.Equal(t, uint64(n-1-i), res[0], "round %d, table[%d]", round, i)
		}
		for i := n; i < n+extra; i++ {
			res, err := call.Call(ctx, uint64(i))
			require.NoError(t, err)
			require.Equal(t, uint64(7), res[0], "round %d, table[%d]", round, i)
		}
		require.NoError(t, b.Close(ctx))
	}
}
