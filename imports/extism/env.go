// Package extism is the host side of Extism's kernel, the import module
// "extism:host/env" that every Extism PDK plugin links against, and of
// hyper-mcp's "extism:host/user" functions, written in Go over toolhost's
// own parts instead of Extism's kernel module and go-sdk: the kernel
// memory is a Go-side arena per instance (Kernel), capped with the
// plugin's linear memory; http_request goes through imports/toolhostv1's
// grants, SSRF dialer and governor (Do); logs and progress go to the
// call's guest notes (internal/guestnote).
//
// Like imports/toolhostv1, Instantiate registers the functions once per
// runtime; what one call may do comes from its context: the caller
// (package host) puts the instance's *Kernel there with With, beside the
// toolhostv1 and guestnote calls. A host function that cannot do what
// the plugin asked stops the call with an error (Extism's own hosts trap
// too), and the Kernel keeps it (Failure) so the caller can say why.
//
// hypermcp.go has the JSON shapes of hyper-mcp's plugin interfaces.
// This package never imports host.
package extism

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/toolhost/toolhost/abi"
	"github.com/toolhost/toolhost/internal/guestnote"
	"github.com/toolhost/toolhost/third_party/wazero"
	"github.com/toolhost/toolhost/third_party/wazero/api"
)

// The import module names of Extism plugins.
const (
	// EnvModule is Extism's kernel: memory, input and output, config,
	// vars, logs and HTTP.
	EnvModule = "extism:host/env"
	// UserModule is where hyper-mcp's host functions live.
	UserModule = "extism:host/user"
	// UsrModule is where hyper-mcp's keyring function lives.
	UsrModule = "extism:host/usr"
)

// Provides reports whether module is one of the import modules this
// package serves.
func Provides(module string) bool {
	return module == EnvModule || module == UserModule || module == UsrModule
}

// Instantiate registers extism:host/env, extism:host/user and
// extism:host/usr in r. Every
// module instantiated in r afterwards may import them.
func Instantiate(ctx context.Context, r wazero.Runtime) error {
	env := r.NewHostModuleBuilder(EnvModule)
	for _, f := range envFuncs {
		f.export(env)
	}
	if _, err := env.Instantiate(ctx); err != nil {
		return err
	}
	for name, fs := range map[string][]hostFunc{UserModule: userFuncs, UsrModule: usrFuncs} {
		b := r.NewHostModuleBuilder(name)
		for _, f := range fs {
			f.export(b)
		}
		if _, err := b.Instantiate(ctx); err != nil {
			return err
		}
	}
	return nil
}

// Signature returns the parameter and result types of module.name, false
// when this package provides no such function, so a loader can name an
// import it does not provide or one declared with another signature.
func Signature(module, name string) (params, results []api.ValueType, ok bool) {
	var fs []hostFunc
	switch module {
	case EnvModule:
		fs = envFuncs
	case UserModule:
		fs = userFuncs
	case UsrModule:
		fs = usrFuncs
	}
	for _, f := range fs {
		if f.name == name {
			return f.params, f.results, true
		}
	}
	return nil, nil, false
}

// hostFunc is one host function with its signature.
type hostFunc struct {
	name            string
	params, results []api.ValueType
	fn              func(ctx context.Context, k *Kernel, mod api.Module, stack []uint64)
}

func (f hostFunc) export(b wazero.HostModuleBuilder) {
	fn, name := f.fn, f.name
	b.NewFunctionBuilder().WithGoModuleFunction(api.GoModuleFunc(func(ctx context.Context, mod api.Module, stack []uint64) {
		k := from(ctx)
		if k == nil {
			// _initialize, or a host that forgot With: nothing to serve.
			panic(fmt.Errorf("%s: Extism functions are available only during a call of the plugin", name))
		}
		fn(ctx, k, mod, stack)
	}), f.params, f.results).Export(name)
}

var (
	i32, i64 = api.ValueTypeI32, api.ValueTypeI64
	none     []api.ValueType
)

func sig(ts ...api.ValueType) []api.ValueType { return ts }

// envFuncs are extism:host/env's functions, with the signatures of
// Extism's kernel (every offset and length is an i64).
var envFuncs = []hostFunc{
	{"alloc", sig(i64), sig(i64), func(_ context.Context, k *Kernel, mod api.Module, s []uint64) {
		off, err := k.alloc(s[0], uint64(mod.Memory().Size()))
		if err != nil {
			k.stop(err)
		}
		s[0] = off
	}},
	{"free", sig(i64), none, func(_ context.Context, k *Kernel, _ api.Module, s []uint64) { k.release(s[0]) }},
	{"length", sig(i64), sig(i64), func(_ context.Context, k *Kernel, _ api.Module, s []uint64) { s[0] = k.length(s[0]) }},
	{"length_unsafe", sig(i64), sig(i64), func(_ context.Context, k *Kernel, _ api.Module, s []uint64) { s[0] = k.length(s[0]) }},
	{"load_u8", sig(i64), sig(i32), func(_ context.Context, k *Kernel, _ api.Module, s []uint64) {
		s[0] = uint64(k.load(s[0], 1, "load_u8")[0])
	}},
	{"load_u64", sig(i64), sig(i64), func(_ context.Context, k *Kernel, _ api.Module, s []uint64) {
		s[0] = binary.LittleEndian.Uint64(k.load(s[0], 8, "load_u64"))
	}},
	{"store_u8", sig(i64, i32), none, func(_ context.Context, k *Kernel, _ api.Module, s []uint64) {
		k.load(s[0], 1, "store_u8")[0] = byte(s[1])
	}},
	{"store_u64", sig(i64, i64), none, func(_ context.Context, k *Kernel, _ api.Module, s []uint64) {
		binary.LittleEndian.PutUint64(k.load(s[0], 8, "store_u64"), s[1])
	}},
	{"input_length", none, sig(i64), func(_ context.Context, k *Kernel, _ api.Module, s []uint64) { s[0] = k.length(k.input) }},
	{"input_offset", none, sig(i64), func(_ context.Context, k *Kernel, _ api.Module, s []uint64) { s[0] = k.input }},
	{"input_load_u8", sig(i64), sig(i32), func(_ context.Context, k *Kernel, _ api.Module, s []uint64) {
		s[0] = uint64(k.loadInput(s[0], 1, "input_load_u8")[0])
	}},
	{"input_load_u64", sig(i64), sig(i64), func(_ context.Context, k *Kernel, _ api.Module, s []uint64) {
		s[0] = binary.LittleEndian.Uint64(k.loadInput(s[0], 8, "input_load_u64"))
	}},
	{"output_set", sig(i64, i64), none, func(_ context.Context, k *Kernel, _ api.Module, s []uint64) {
		b, ok := k.span(s[0], s[1])
		if !ok {
			k.stop(fmt.Errorf("output_set(%d, %d): outside the kernel memory", s[0], s[1]))
		}
		k.output, k.outSet = append([]byte(nil), b...), true
	}},
	{"error_set", sig(i64), none, func(_ context.Context, k *Kernel, _ api.Module, s []uint64) {
		if s[0] == 0 {
			k.errMsg, k.errSet = "", false
			return
		}
		k.errMsg, k.errSet = string(k.block(s[0], "error_set")), true
	}},
	{"config_get", sig(i64), sig(i64), func(_ context.Context, k *Kernel, mod api.Module, s []uint64) {
		v, ok := k.cfg.Config[string(k.block(s[0], "config_get"))]
		if !ok {
			s[0] = 0
			return
		}
		s[0] = k.put(mod, []byte(v))
	}},
	{"var_get", sig(i64), sig(i64), func(_ context.Context, k *Kernel, mod api.Module, s []uint64) {
		v, ok := k.vars[string(k.block(s[0], "var_get"))]
		if !ok {
			s[0] = 0
			return
		}
		s[0] = k.put(mod, v)
	}},
	{"var_set", sig(i64, i64), none, func(_ context.Context, k *Kernel, _ api.Module, s []uint64) {
		key := string(k.block(s[0], "var_set"))
		var value []byte
		if s[1] != 0 {
			value = append([]byte{}, k.block(s[1], "var_set")...)
		}
		if err := k.setVar(key, value); err != nil {
			k.stop(err)
		}
	}},
	logFunc("log_trace", abi.LogDebug),
	logFunc("log_debug", abi.LogDebug),
	logFunc("log_info", abi.LogInfo),
	logFunc("log_warn", abi.LogWarning),
	logFunc("log_error", abi.LogError),
	// Every level reaches the host, which caps and rate-limits notes itself.
	{"get_log_level", none, sig(i32), func(_ context.Context, _ *Kernel, _ api.Module, s []uint64) { s[0] = 0 }}, // trace
	{"http_request", sig(i64, i64), sig(i64), httpRequest},
	{"http_status_code", none, sig(i32), func(_ context.Context, k *Kernel, _ api.Module, s []uint64) {
		s[0] = api.EncodeI32(k.status)
	}},
	{"http_headers", none, sig(i64), httpHeaders},
}

// logFunc is log_LEVEL(offset): the block's text as a guest note. The
// block is left to the plugin (Extism's go-sdk frees it; a plugin that
// frees it too would then free whatever reused it).
func logFunc(name string, level abi.LogLevel) hostFunc {
	return hostFunc{name, sig(i64), none, func(ctx context.Context, k *Kernel, _ api.Module, s []uint64) {
		msg := k.block(s[0], name)
		if c := guestnote.CallFrom(ctx); c != nil {
			c.Log(bytesMemory(msg), int32(level), 0, uint32(min(len(msg), 1<<20)))
		}
	}}
}

// load returns the n bytes of kernel memory at off, stopping the call
// when they are outside it.
func (k *Kernel) load(off, n uint64, fn string) []byte {
	b, ok := k.span(off, n)
	if !ok {
		k.stop(fmt.Errorf("%s(%d): outside the %d bytes of kernel memory", fn, off, len(k.mem)))
	}
	return b
}

// loadInput returns the n bytes of the input at off (relative to the
// input's start), stopping the call when they are outside it.
func (k *Kernel) loadInput(off, n uint64, fn string) []byte {
	in, _ := k.blockBytes(k.input)
	if off > uint64(len(in)) || n > uint64(len(in))-off {
		k.stop(fmt.Errorf("%s(%d): outside the %d-byte input", fn, off, len(in)))
	}
	return in[off : off+n]
}

// block returns the bytes of the block at off, stopping the call when off
// is no block.
func (k *Kernel) block(off uint64, fn string) []byte {
	b, ok := k.blockBytes(off)
	if !ok {
		k.stop(fmt.Errorf("%s(%d): no block of kernel memory starts there", fn, off))
	}
	return b
}

// put copies b into a new block and returns its offset.
func (k *Kernel) put(mod api.Module, b []byte) uint64 {
	off, err := k.alloc(uint64(len(b)), uint64(mod.Memory().Size()))
	if err != nil {
		k.stop(err)
	}
	copy(k.mem[off-1:], b)
	return off
}

// stop ends the plugin's call with err, kept as the call's Failure:
// wazero recovers the panic and returns it from the exported function.
func (k *Kernel) stop(err error) {
	if k.failure == nil {
		k.failure = err
	}
	panic(err)
}

// ErrUnsupported marks a host function toolhost does not provide beyond
// its name: the call that uses it fails saying so.
var ErrUnsupported = errors.New("not supported by toolhost")

// bytesMemory is a message as a guestnote.Memory.
type bytesMemory []byte

func (b bytesMemory) Size() uint32 { return uint32(min(len(b), 1<<31)) }

func (b bytesMemory) Read(off, n uint32) ([]byte, bool) {
	if uint64(off)+uint64(n) > uint64(len(b)) {
		return nil, false
	}
	return b[off : off+n], true
}
