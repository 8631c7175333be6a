package wasm

import (
	"testing"

	"github.com/toolhost/toolhost/third_party/wazero/api"
	"github.com/toolhost/toolhost/third_party/wazero/experimental"
	"github.com/toolhost/toolhost/third_party/wazero/internal/testing/require"
)

// TestModule_Validate_NoCalls: validation marks the functions whose bodies have no call
// instruction of any kind, which the compiler then leaves without a function-entry termination
// check, and no other function.
func TestModule_Validate_NoCalls(t *testing.T) {
	v_v := FunctionType{}
	for _, tc := range []struct {
		name    string
		body    []byte
		noCalls bool
	}{
		{"empty", []byte{OpcodeEnd}, true},
		{"loop", []byte{OpcodeLoop, 0x40, OpcodeBr, 0, OpcodeEnd, OpcodeEnd}, true},
		// 0x10 is call's opcode byte, here an immediate: only instructions count.
		{"call byte as an immediate", []byte{OpcodeI32Const, 0x10, OpcodeDrop, OpcodeEnd}, true},
		{"call", []byte{OpcodeCall, 0, OpcodeEnd}, false},
		{"call in dead code", []byte{OpcodeReturn, OpcodeCall, 0, OpcodeEnd}, false},
		{"call_indirect", []byte{OpcodeI32Const, 0, OpcodeCallIndirect, 0, 0, OpcodeEnd}, false},
		{"return_call", []byte{OpcodeTailCallReturnCall, 0, OpcodeEnd}, false},
		{"return_call_indirect", []byte{OpcodeI32Const, 0, OpcodeTailCallReturnCallIndirect, 0, 0, OpcodeEnd}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := &Module{
				TypeSection:     []FunctionType{v_v},
				FunctionSection: []Index{0},
				CodeSection:     []Code{{Body: tc.body}},
				TableSection:    []Table{{Min: 1, Type: RefTypeFuncref}},
			}
			require.NoError(t, m.Validate(api.CoreFeaturesV2|experimental.CoreFeaturesTailCall))
			require.Equal(t, tc.noCalls, m.CodeSection[0].NoCalls)
		})
	}
	t.Run("not validated", func(t *testing.T) {
		require.False(t, (&Code{Body: []byte{OpcodeEnd}}).NoCalls)
	})
	t.Run("invalid", func(t *testing.T) { // i32.add on an empty stack
		m := &Module{
			TypeSection:     []FunctionType{v_v},
			FunctionSection: []Index{0},
			CodeSection:     []Code{{Body: []byte{OpcodeI32Add, OpcodeEnd}, NoCalls: true}},
		}
		require.Error(t, m.Validate(api.CoreFeaturesV2))
		require.False(t, m.CodeSection[0].NoCalls)
	})
}
