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

// tableShape is what tableModule adds to its n functions: extra more
// references to function 7, an imported function ("env" "seven",
// answering 700) referenced last, and a ref.null after them.
type tableShape struct {
	extra          int
	imported, null bool
}

// tableModule has n functions, function i returning i, a table holding
// them all in reverse order (from two element segments, the second one
// ending with what shape adds), and call(i) = table[i](). A segment of
// plain "ref.func"s is filled by FunctionInstanceReferences in one step;
// a null in the second makes that one go entry by entry.
func tableModule(n int, shape tableShape) []byte {
	base := 0
	m := &wasm.Module{
		TypeSection: []wasm.FunctionType{
			{Results: []wasm.ValueType{i32}, ResultNumInUint64: 1},
			{Params: []wasm.ValueType{i32}, Results: []wasm.ValueType{i32}, ParamNumInUint64: 1, ResultNumInUint64: 1},
		},
	}
	if shape.imported {
		m.ImportSection = []wasm.Import{{Type: wasm.ExternTypeFunc, Module: "env", Name: "seven", DescFunc: 0}}
		base = 1
	}
	size := n + shape.extra
	var first, second []wasm.ConstantExpression
	for i := range n {
		m.FunctionSection = append(m.FunctionSection, 0)
		body := append([]byte{wasm.OpcodeI32Const}, leb128.EncodeInt32(int32(i))...)
		m.CodeSection = append(m.CodeSection, wasm.Code{Body: append(body, wasm.OpcodeEnd)})
		ref := wasm.NewConstantExpressionFromOpcode(wasm.OpcodeRefFunc, leb128.EncodeUint32(uint32(base+n-1-i)))
		if i < n/2 {
			first = append(first, ref)
		} else {
			second = append(second, ref)
		}
	}
	for range shape.extra {
		second = append(second, wasm.NewConstantExpressionFromOpcode(wasm.OpcodeRefFunc, leb128.EncodeUint32(uint32(base+7))))
	}
	if shape.imported {
		second = append(second, wasm.NewConstantExpressionFromOpcode(wasm.OpcodeRefFunc, leb128.EncodeUint32(0)))
		size++
	}
	if shape.null {
		second = append(second, wasm.ConstantExpression{Data: []byte{wasm.OpcodeRefNull, wasm.RefTypeFuncref.Kind(), wasm.OpcodeEnd}})
		size++
	}
	m.FunctionSection = append(m.FunctionSection, 1)
	m.CodeSection = append(m.CodeSection, wasm.Code{Body: []byte{
		wasm.OpcodeLocalGet, 0, wasm.OpcodeCallIndirect, 0, 0, wasm.OpcodeEnd,
	}})
	m.TableSection = []wasm.Table{{Min: uint32(size), Type: wasm.RefTypeFuncref}}
	m.ExportSection = []wasm.Export{{Name: "call", Type: wasm.ExternTypeFunc, Index: uint32(base + n)}}
	m.ElementSection = []wasm.ElementSegment{
		{OffsetExpr: wasm.NewConstantExpressionFromI32(0), Init: first, Type: wasm.RefTypeFuncref, Mode: wasm.ElementModeActive},
		{OffsetExpr: wasm.NewConstantExpressionFromI32(int32(n / 2)), Init: second, Type: wasm.RefTypeFuncref, Mode: wasm.ElementModeActive},
	}
	return binaryencoding.EncodeModule(m)
}

// TestE2E_tableReferencesOfManyFunctions: table references point into the
// chunks of function instances an instance makes (FunctionInstanceReference
// and FunctionInstanceReferences), so every entry must call its own
// function in every instance, after the chunks filled up and after a GC,
// and with other instances closed: with segments filled in one step, with
// one filled entry by entry beside it, and with an imported function among
// the references.
func TestE2E_tableReferencesOfManyFunctions(t *testing.T) {
	for _, shape := range []tableShape{
		{extra: 1}, {extra: 3000}, {extra: 1, null: true}, {extra: 3000, null: true},
		{extra: 1, imported: true}, {extra: 1, imported: true, null: true},
	} {
		t.Run(fmt.Sprintf("%+v", shape), func(t *testing.T) { tableReferences(t, 1000, shape) })
	}
}

func tableReferences(t *testing.T, n int, shape tableShape) {
	ctx := context.Background()
	r := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfigCompiler())
	defer r.Close(ctx)
	if shape.imported {
		_, err := r.NewHostModuleBuilder("env").NewFunctionBuilder().
			WithFunc(func(context.Context) uint32 { return 700 }).Export("seven").Instantiate(ctx)
		require.NoError(t, err)
	}
	c, err := r.CompileModule(ctx, tableModule(n, shape))
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
		i := n
		for ; i < n+shape.extra; i++ {
			res, err := call.Call(ctx, uint64(i))
			require.NoError(t, err)
			require.Equal(t, uint64(7), res[0], "round %d, table[%d]", round, i)
		}
		if shape.imported {
			res, err := call.Call(ctx, uint64(i))
			require.NoError(t, err)
			require.Equal(t, uint64(700), res[0], "round %d, table[%d], the import", round, i)
			i++
		}
		if shape.null {
			_, err := call.Call(ctx, uint64(i))
			require.Error(t, err, "round %d, table[%d], the null", round, i)
		}
		require.NoError(t, b.Close(ctx))
	}
}
