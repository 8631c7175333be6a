package wasm

import (
	"testing"

	"github.com/toolhost/toolhost/third_party/wazero/internal/leb128"
	"github.com/toolhost/toolhost/third_party/wazero/internal/testing/require"
)

// TestConstantExpression_refFuncIndex: applyElements reads "ref.func N"
// itself, so it must accept exactly the expressions evaluateConstExpr
// turns into FunctionInstanceReference(N), and leave every other one to
// the evaluator.
func TestConstantExpression_refFuncIndex(t *testing.T) {
	for _, n := range []uint32{0, 1, 127, 128, 6400, 1<<32 - 1} {
		e := NewConstantExpressionFromOpcode(OpcodeRefFunc, leb128.EncodeUint32(n))
		got, ok := e.refFuncIndex()
		require.True(t, ok)
		require.Equal(t, n, got)
		var resolved Index
		_, _, err := evaluateConstExpr(&e, nil, func(i Index) (Reference, error) { resolved = i; return 0, nil })
		require.NoError(t, err)
		require.Equal(t, n, resolved)
	}
	for _, e := range []ConstantExpression{
		{},
		{Data: []byte{OpcodeRefFunc}},
		{Data: []byte{OpcodeRefFunc, 1}}, // no end
		{Data: []byte{OpcodeRefFunc, 1, OpcodeEnd, OpcodeEnd}},          // trailing bytes
		{Data: []byte{OpcodeRefFunc, 0x80, OpcodeEnd}},                  // truncated LEB128
		{Data: []byte{OpcodeRefNull, RefTypeFuncref.Kind(), OpcodeEnd}}, // ref.null
		NewConstantExpressionFromI32(1),
		{Data: []byte{OpcodeGlobalGet, 0, OpcodeEnd}},
	} {
		_, ok := e.refFuncIndex()
		require.False(t, ok, "%x", e.Data)
	}
}

// TestRefFuncIndices: a segment's FuncIndices are its "ref.func" indices
// when every entry is one, and nil (instantiation reads entry by entry)
// when any is not, or when it has none.
func TestRefFuncIndices(t *testing.T) {
	ref := func(n uint32) ConstantExpression {
		return NewConstantExpressionFromOpcode(OpcodeRefFunc, leb128.EncodeUint32(n))
	}
	require.Equal(t, []Index{3, 200, 0}, refFuncIndices([]ConstantExpression{ref(3), ref(200), ref(0)}))
	require.Nil(t, refFuncIndices(nil))
	require.Nil(t, refFuncIndices([]ConstantExpression{ref(3), {Data: []byte{OpcodeRefNull, RefTypeFuncref.Kind(), OpcodeEnd}}}))
	require.Nil(t, refFuncIndices([]ConstantExpression{{Data: []byte{OpcodeGlobalGet, 0, OpcodeEnd}}, ref(1)}))
}
