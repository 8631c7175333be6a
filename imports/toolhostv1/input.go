package toolhostv1

import (
	"context"

	"github.com/toolhost/toolhost/abi"
	"github.com/toolhost/toolhost/internal/guestinput"
	"github.com/toolhost/toolhost/third_party/wazero"
	"github.com/toolhost/toolhost/third_party/wazero/api"
)

// exportInput exports input (abi.ImportInput). It needs no grant: it only
// reads back what the transport verified for this call.
func exportInput(b wazero.HostModuleBuilder) {
	i32 := api.ValueTypeI32
	b.NewFunctionBuilder().WithGoModuleFunction(api.GoModuleFunc(input), []api.ValueType{i32, i32}, []api.ValueType{i32}).
		WithParameterNames("buf_ptr", "buf_len").Export(abi.ImportInput)
}

// input is toolhost_v1.input(buf_ptr i32, buf_len i32) -> i32.
//
//	guest memory: [buf_ptr, buf_ptr+min(buf_len, n))  the abi.InputResume JSON (written)
//	result:       n, the document's whole length; 0 when the call resumes
//	              no input request (nothing written); -1 when the range is
//	              outside guest memory
//
// A guest asks with buf_len 0 first, then with a buffer of n bytes. It
// never traps.
func input(ctx context.Context, mod api.Module, stack []uint64) {
	ptr, n := api.DecodeU32(stack[0]), api.DecodeU32(stack[1])
	doc := guestinput.Resume(ctx)
	b := doc[:min(int(n), len(doc))]
	if len(b) > 0 && !mod.Memory().Write(ptr, b) {
		stack[0] = api.EncodeI32(-1)
		return
	}
	stack[0] = api.EncodeI32(int32(len(doc)))
}
