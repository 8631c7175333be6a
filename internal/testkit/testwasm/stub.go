package testwasm

import (
	"context"
	"testing"

	"github.com/toolhost/toolhost/abi"
	"github.com/toolhost/toolhost/third_party/wazero"
	"github.com/toolhost/toolhost/third_party/wazero/api"
)

// ToolhostV1 is every function of the toolhost_v1 host module with its
// signature (parameters, results), as docs/ABI.md gives them. The real
// module's test (imports/toolhostv1) holds it to this table, so that the
// stubs StubToolhostV1 makes from it never miss an import a module may
// declare.
var ToolhostV1 = map[string][2][]api.ValueType{
	abi.ImportHTTPRequest:  {{i32, i32}, {i32}},
	abi.ImportHTTPResponse: {{i32, i32}, {i32}},
	abi.ImportProgress:     {{f64, f64, i32, i32}, {i32}},
	abi.ImportLog:          {{i32, i32, i32}, {i32}},
	abi.ImportInput:        {{i32, i32}, {i32}},
}

const (
	i32 = api.ValueTypeI32
	f64 = api.ValueTypeF64
)

// StubToolhostV1 instantiates in rt a toolhost_v1 whose every function
// returns 0, so that a module importing any of them instantiates for a
// test that does not exercise them (describing it, reading its memory).
func StubToolhostV1(t testing.TB, rt wazero.Runtime) {
	t.Helper()
	zero := api.GoModuleFunc(func(_ context.Context, _ api.Module, stack []uint64) {
		for i := range stack {
			stack[i] = 0
		}
	})
	b := rt.NewHostModuleBuilder(abi.ImportModule)
	for name, sig := range ToolhostV1 {
		b = b.NewFunctionBuilder().WithGoModuleFunction(zero, sig[0], sig[1]).Export(name)
	}
	if _, err := b.Instantiate(context.Background()); err != nil {
		t.Fatal(err)
	}
}
