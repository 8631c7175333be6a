package frontend

import (
	"strings"
	"testing"

	"github.com/toolhost/toolhost/third_party/wazero/api"
	"github.com/toolhost/toolhost/third_party/wazero/internal/engine/wazevo/ssa"
	"github.com/toolhost/toolhost/third_party/wazero/internal/engine/wazevo/wazevoapi"
	"github.com/toolhost/toolhost/third_party/wazero/internal/testing/require"
	"github.com/toolhost/toolhost/third_party/wazero/internal/wasm"
)

// TestCompiler_terminationChecks counts the termination checks (calls of the
// check-module-exit-code trampoline, at offset 0x58 of the execution context) in the SSA of
// function shapes that loop headers alone do not bound.
func TestCompiler_terminationChecks(t *testing.T) {
	i32_i32 := wasm.FunctionType{Params: []wasm.ValueType{wasm.ValueTypeI32}, Results: []wasm.ValueType{wasm.ValueTypeI32}}
	// tail is n bytes of straight-line code: i32.const 1, i32.add (3 bytes each).
	tail := func(n int) []byte {
		var b []byte
		for len(b) < n {
			b = append(b, wasm.OpcodeI32Const, 1, wasm.OpcodeI32Add)
		}
		return b
	}
	recurse := func(after []byte) []byte { // f(n) = n == 0 ? 0 : f(n-1) + after...
		b := []byte{
			wasm.OpcodeLocalGet, 0, wasm.OpcodeI32Eqz,
			wasm.OpcodeIf, 0x40, wasm.OpcodeI32Const, 0, wasm.OpcodeReturn, wasm.OpcodeEnd,
			wasm.OpcodeLocalGet, 0, wasm.OpcodeI32Const, 1, wasm.OpcodeI32Sub, wasm.OpcodeCall, 0,
		}
		return append(append(b, after...), wasm.OpcodeEnd)
	}
	leaf := func(n int) []byte { return append(append([]byte{wasm.OpcodeLocalGet, 0}, tail(n)...), wasm.OpcodeEnd) }
	for _, tc := range []struct {
		name   string
		body   []byte
		checks int
	}{
		// Short tails after the call: the entry check alone.
		{"recursion, short tail", recurse(tail(terminationTailBytes - 3)), 1},
		// A long tail would run unchecked in every frame of an unwinding stack: checked after the call.
		{"recursion, long tail", recurse(tail(terminationTailBytes + 3)), 2},
		// Without calls a function cannot recurse: a short one has no check...
		{"short leaf", leaf(terminationTailBytes - 8), 0},
		// ...but a long one has, or each frame's short tail could call it.
		{"long leaf", leaf(terminationTailBytes + 4), 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := &wasm.Module{
				TypeSection:     []wasm.FunctionType{i32_i32},
				FunctionSection: []wasm.Index{0},
				CodeSection:     []wasm.Code{{Body: tc.body}},
			}
			require.NoError(t, m.Validate(api.CoreFeaturesV2))
			b := ssa.NewBuilder()
			offset := wazevoapi.NewModuleContextOffsetData(m, false)
			fc := NewFrontendCompiler(m, b, &offset, true, false, false)
			fc.Init(0, 0, &m.TypeSection[0], nil, tc.body, false, 0)
			fc.LowerToSSA()
			ir := fc.formatBuilder()
			require.Equal(t, tc.checks, strings.Count(ir, "Load exec_ctx, 0x58"), ir)
		})
	}
}
