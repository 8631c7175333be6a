package toolhostv1_test

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/toolhost/toolhost/abi"
	"github.com/toolhost/toolhost/imports/toolhostv1"
	"github.com/toolhost/toolhost/internal/guestinput"
	"github.com/toolhost/toolhost/internal/testkit/testwasm"
	"github.com/toolhost/toolhost/third_party/wazero"
	"github.com/toolhost/toolhost/third_party/wazero/api"
)

// The module exports exactly the functions docs/ABI.md names, with their
// signatures; a function added to exportFunctions without its abi name
// (or the reverse) fails here.
func TestBuilderExports(t *testing.T) {
	ctx := context.Background()
	r := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfigInterpreter())
	defer r.Close(ctx)
	c, err := toolhostv1.NewBuilder(r).Compile(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if c.Name() != abi.ImportModule {
		t.Errorf("module name %q, want %q", c.Name(), abi.ImportModule)
	}
	want := testwasm.ToolhostV1 // what the test stubs are made from
	got := c.ExportedFunctions()
	if len(got) != len(want) {
		t.Errorf("%d exports, want %d", len(got), len(want))
	}
	for name, sig := range want {
		def, ok := got[name]
		if !ok {
			t.Errorf("no export %s", name)
			continue
		}
		if !slices.Equal(def.ParamTypes(), sig[0]) || !slices.Equal(def.ResultTypes(), sig[1]) {
			t.Errorf("%s: signature %v -> %v, want %v -> %v", name, def.ParamTypes(), def.ResultTypes(), sig[0], sig[1])
		}
	}
}

// guestCalling is a module whose exports "f0", "f1", … take (i32, i32),
// pass them to the toolhost_v1 import of the same position in names, and
// return its i32 (every name here is under 128 bytes: one-byte lengths).
func guestCalling(names ...string) []byte {
	str := func(s string) []byte { return append([]byte{byte(len(s))}, s...) }
	section := func(id byte, content []byte) []byte { return append([]byte{id, byte(len(content))}, content...) }
	n := byte(len(names))
	imports, funcs, exports, code := []byte{n}, []byte{n}, []byte{n}, []byte{n}
	for i, name := range names {
		imports = append(append(append(imports, str(toolhostv1.ModuleName)...), str(name)...), 0, 0)
		funcs = append(funcs, 0)
		exports = append(append(exports, str(fmt.Sprintf("f%d", i))...), 0, byte(len(names)+i))
		// no locals; local.get 0; local.get 1; call i; end
		code = append(code, 8, 0, 0x20, 0, 0x20, 1, 0x10, byte(i), 0x0b)
	}
	b := []byte("\x00asm\x01\x00\x00\x00")
	b = append(b, section(1, []byte{1, 0x60, 2, 0x7f, 0x7f, 1, 0x7f})...)
	b = append(b, section(2, imports)...)
	b = append(b, section(3, funcs)...)
	b = append(b, section(7, exports)...)
	return append(b, section(10, code)...)
}

// A host function called without a Call in its context (a caller that
// forgot WithCall) fails with -1 instead of panicking or reaching out.
func TestFunctionsWithoutCall(t *testing.T) {
	ctx := context.Background()
	r := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfigInterpreter())
	defer r.Close(ctx)
	if _, err := toolhostv1.Instantiate(ctx, r); err != nil {
		t.Fatal(err)
	}
	names := []string{abi.ImportHTTPRequest, abi.ImportHTTPResponse}
	guest, err := r.Instantiate(ctx, guestCalling(names...))
	if err != nil {
		t.Fatal(err)
	}
	for i, name := range names {
		res, err := guest.ExportedFunction(fmt.Sprintf("f%d", i)).Call(ctx, 0, 16)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if got := api.DecodeI32(res[0]); got != -1 {
			t.Errorf("%s without a call = %d, want -1", name, got)
		}
	}
}

// input answers 0 to a call that resumes nothing, whatever the buffer,
// and the document's length to the length query of one that does, without
// touching memory (this guest has none; the C and AssemblyScript tests in
// package host check the copy).
func TestInputLengths(t *testing.T) {
	ctx := context.Background()
	r := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfigInterpreter())
	defer r.Close(ctx)
	if _, err := toolhostv1.Instantiate(ctx, r); err != nil {
		t.Fatal(err)
	}
	guest, err := r.Instantiate(ctx, guestCalling(abi.ImportInput))
	if err != nil {
		t.Fatal(err)
	}
	resumed := guestinput.WithResume(ctx, []byte(`{"responses":{}}`))
	for _, tc := range []struct {
		ctx    context.Context
		ptr, n uint64
		want   int32
		what   string
	}{
		{ctx, 0, 0, 0, "a first call"},
		{ctx, 16, 64, 0, "a first call with a buffer"},
		{resumed, 0, 0, 16, "the length query"},
	} {
		res, err := guest.ExportedFunction("f0").Call(tc.ctx, tc.ptr, tc.n)
		if err != nil {
			t.Fatalf("%s: %v", tc.what, err)
		}
		if got := api.DecodeI32(res[0]); got != tc.want {
			t.Errorf("%s = %d, want %d", tc.what, got, tc.want)
		}
	}
}
