package wasm

import (
	"testing"

	"github.com/toolhost/toolhost/third_party/wazero/api"
	"github.com/toolhost/toolhost/third_party/wazero/internal/testing/require"
)

// TestModule_Validate_FunctionsValidatedBefore: function bodies are
// validated unless the engine holds code compiled from these bytes.
func TestModule_Validate_FunctionsValidatedBefore(t *testing.T) {
	bad := func() *Module { // i32.add on an empty stack
		return &Module{
			TypeSection:     []FunctionType{{}},
			FunctionSection: []Index{0},
			CodeSection:     []Code{{Body: []byte{OpcodeI32Add, OpcodeEnd}}},
		}
	}
	require.Error(t, bad().Validate(api.CoreFeaturesV2))
	m := bad()
	m.FunctionsValidatedBefore = true
	require.NoError(t, m.Validate(api.CoreFeaturesV2))
}
