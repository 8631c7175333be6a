package frontend

import (
	"github.com/toolhost/toolhost/third_party/wazero/internal/engine/wazevo/ssa"
	"github.com/toolhost/toolhost/third_party/wazero/internal/wasm"
)

func FunctionIndexToFuncRef(idx wasm.Index) ssa.FuncRef {
	return ssa.FuncRef(idx)
}
