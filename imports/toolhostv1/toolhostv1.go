// Package toolhostv1 is the host side of the toolhost_v1 import module
// (abi.ImportModule), laid out like wazero's imports/wasi_snapshot_preview1:
// Instantiate registers the module's functions on a wazero.Runtime once,
// for every guest to import: governed egress (abi.ImportHTTPRequest,
// abi.ImportHTTPResponse) as far as the operator's Grant for the calling
// module allows, the guest's side being abi/guest's Client; and progress
// and logs (abi.ImportProgress, abi.ImportLog), which need no grant.
//
// The functions are shared by every instance; what one call may do comes
// from its context: the caller (package host) puts a *Call there with
// WithCall before running guest code (and a *guestnote.Call with
// guestnote.WithCall for progress and log). This package never imports
// host.
package toolhostv1

import (
	"context"

	"github.com/toolhost/toolhost/abi"
	"github.com/toolhost/toolhost/third_party/wazero"
	"github.com/toolhost/toolhost/third_party/wazero/api"
)

// ModuleName is the import module name guests use: "toolhost_v1".
const ModuleName = abi.ImportModule

// Instantiate registers the toolhost_v1 host module in r. Every module
// instantiated in r afterwards may import it. It is NewBuilder(r).Instantiate(ctx).
func Instantiate(ctx context.Context, r wazero.Runtime) (api.Closer, error) {
	return NewBuilder(r).Instantiate(ctx)
}

// Builder configures the toolhost_v1 host module for a runtime.
type Builder interface {
	// Compile compiles the host module, to instantiate later.
	Compile(context.Context) (wazero.CompiledModule, error)
	// Instantiate instantiates the host module in the Builder's runtime.
	Instantiate(context.Context) (api.Closer, error)
}

// NewBuilder returns a Builder of the toolhost_v1 host module for r.
func NewBuilder(r wazero.Runtime) Builder {
	b := r.NewHostModuleBuilder(ModuleName)
	exportFunctions(b)
	return builder{b}
}

type builder struct{ b wazero.HostModuleBuilder }

func (b builder) Compile(ctx context.Context) (wazero.CompiledModule, error) { return b.b.Compile(ctx) }

func (b builder) Instantiate(ctx context.Context) (api.Closer, error) { return b.b.Instantiate(ctx) }

// exportFunctions is the one place the module's functions are exported:
// a new host function (and its abi.Import* name, documented in
// docs/ABI.md) is added here. Each reads its call's state with callFrom.
func exportFunctions(b wazero.HostModuleBuilder) {
	i32 := api.ValueTypeI32
	b.NewFunctionBuilder().WithGoModuleFunction(api.GoModuleFunc(httpRequest), []api.ValueType{i32, i32}, []api.ValueType{i32}).
		WithParameterNames("req_ptr", "req_len").Export(abi.ImportHTTPRequest)
	b.NewFunctionBuilder().WithGoModuleFunction(api.GoModuleFunc(httpResponse), []api.ValueType{i32, i32}, []api.ValueType{i32}).
		WithParameterNames("buf_ptr", "buf_len").Export(abi.ImportHTTPResponse)
	exportNotes(b) // progress and log
	exportInput(b) // the answers to an input request
}
