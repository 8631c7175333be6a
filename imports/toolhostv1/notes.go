package toolhostv1

import (
	"context"

	"github.com/toolhost/toolhost/abi"
	"github.com/toolhost/toolhost/internal/guestnote"
	"github.com/toolhost/toolhost/third_party/wazero"
	"github.com/toolhost/toolhost/third_party/wazero/api"
)

// exportNotes exports progress and log (abi.ImportProgress,
// abi.ImportLog). They need no grant: what they say goes to the call's own
// caller and the server log, never beyond the host. Their per-call state
// is the *guestnote.Call the caller (package host) puts in the context
// with guestnote.WithCall, beside this package's *Call.
func exportNotes(b wazero.HostModuleBuilder) {
	i32, f64 := api.ValueTypeI32, api.ValueTypeF64
	b.NewFunctionBuilder().WithGoModuleFunction(api.GoModuleFunc(progress), []api.ValueType{f64, f64, i32, i32}, []api.ValueType{i32}).
		WithParameterNames("done", "total", "msg_ptr", "msg_len").Export(abi.ImportProgress)
	b.NewFunctionBuilder().WithGoModuleFunction(api.GoModuleFunc(logNote), []api.ValueType{i32, i32, i32}, []api.ValueType{i32}).
		WithParameterNames("level", "msg_ptr", "msg_len").Export(abi.ImportLog)
}

// progress is toolhost_v1.progress(done f64, total f64, msg_ptr i32,
// msg_len i32) -> i32.
//
//	guest memory: [msg_ptr, msg_ptr+min(msg_len, 1 KiB))  the message (read; the whole
//	              range [msg_ptr, msg_ptr+msg_len) must be in memory)
//	result:       an abi.NoteStatus
//
// It never traps; outside a tool call (at load) it answers
// abi.NoteDropped.
func progress(ctx context.Context, mod api.Module, stack []uint64) {
	c := guestnote.CallFrom(ctx)
	if c == nil {
		stack[0] = api.EncodeI32(int32(abi.NoteDropped))
		return
	}
	st := c.Progress(mod.Memory(), api.DecodeF64(stack[0]), api.DecodeF64(stack[1]),
		api.DecodeU32(stack[2]), api.DecodeU32(stack[3]))
	stack[0] = api.EncodeI32(int32(st))
}

// logNote is toolhost_v1.log(level i32, msg_ptr i32, msg_len i32) -> i32.
//
//	guest memory: [msg_ptr, msg_ptr+min(msg_len, 4 KiB))  the message (read; the whole
//	              range [msg_ptr, msg_ptr+msg_len) must be in memory)
//	result:       an abi.NoteStatus
//
// It never traps; outside a tool call (at load) it answers
// abi.NoteDropped.
func logNote(ctx context.Context, mod api.Module, stack []uint64) {
	c := guestnote.CallFrom(ctx)
	if c == nil {
		stack[0] = api.EncodeI32(int32(abi.NoteDropped))
		return
	}
	st := c.Log(mod.Memory(), api.DecodeI32(stack[0]), api.DecodeU32(stack[1]), api.DecodeU32(stack[2]))
	stack[0] = api.EncodeI32(int32(st))
}
