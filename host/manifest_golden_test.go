package host_test

import (
	"bytes"
	"context"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/toolhost/toolhost/abi"
	"github.com/toolhost/toolhost/internal/testkit/testwasm"
	"github.com/toolhost/toolhost/third_party/wazero"
	"github.com/toolhost/toolhost/third_party/wazero/api"
)

var updateManifests = flag.Bool("update-manifests", false, "rewrite testdata/manifests/*.json from the tool modules' toolhost_describe")

// TestToolManifestsUnchanged holds every module under tools-src (and
// tools-src-c) to the exact manifest bytes its toolhost_describe returned
// when the golden files were written: a change to the guest SDK (how it
// reflects schemas, when it builds the manifest) must not change what any
// tool publishes. Rewrite them with -update-manifests only for a change
// meant to alter a manifest.
func TestToolManifestsUnchanged(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and compiles every tool module")
	}
	root := testwasm.Root(t)
	var mods []struct{ name, path string }
	goDirs, _ := filepath.Glob(filepath.Join(root, "tools-src", "*", "main.go"))
	for _, m := range goDirs {
		name := filepath.Base(filepath.Dir(m))
		mods = append(mods, struct{ name, path string }{name, testwasm.Go(t, "./tools-src/"+name)})
	}
	cDirs, _ := filepath.Glob(filepath.Join(root, "tools-src-c", "*"))
	for _, d := range cDirs {
		name := filepath.Base(d)
		mods = append(mods, struct{ name, path string }{name, testwasm.C(t, "tools-src-c/"+name)})
	}
	if len(goDirs) == 0 {
		t.Fatal("no tools-src/*/main.go")
	}
	raw := newRawRuntime(t)
	raw.stubEgress(t)
	for _, m := range mods {
		t.Run(m.name, func(t *testing.T) {
			got := raw.describe(t, raw.compile(t, m.path))
			golden := filepath.Join("testdata", "manifests", m.name+".json")
			if *updateManifests {
				if err := os.MkdirAll(filepath.Dir(golden), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(golden, got, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (write it with -update-manifests)", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("%s: toolhost_describe changed\n got: %s\nwant: %s", m.name, got, want)
			}
		})
	}
}

// stubEgress satisfies the toolhost_v1 imports (egress, progress, log)
// with functions that return 0, so modules that import them instantiate.
func (r *rawRuntime) stubEgress(t testing.TB) {
	refuse := api.GoModuleFunc(func(_ context.Context, _ api.Module, stack []uint64) { stack[0] = 0 })
	i32 := []api.ValueType{api.ValueTypeI32}
	i32x2 := []api.ValueType{api.ValueTypeI32, api.ValueTypeI32}
	i32x3 := []api.ValueType{api.ValueTypeI32, api.ValueTypeI32, api.ValueTypeI32}
	progress := []api.ValueType{api.ValueTypeF64, api.ValueTypeF64, api.ValueTypeI32, api.ValueTypeI32}
	_, err := r.rt.NewHostModuleBuilder(abi.ImportModule).
		NewFunctionBuilder().WithGoModuleFunction(refuse, i32x2, i32).Export(abi.ImportHTTPRequest).
		NewFunctionBuilder().WithGoModuleFunction(refuse, i32x2, i32).Export(abi.ImportHTTPResponse).
		NewFunctionBuilder().WithGoModuleFunction(refuse, progress, i32).Export(abi.ImportProgress).
		NewFunctionBuilder().WithGoModuleFunction(refuse, i32x3, i32).Export(abi.ImportLog).
		Instantiate(context.Background())
	if err != nil {
		t.Fatal(err)
	}
}

// describe returns what toolhost_describe returns in a fresh instance.
func (r *rawRuntime) describe(t testing.TB, c wazero.CompiledModule) []byte {
	t.Helper()
	ctx := context.Background()
	mod, err := r.rt.InstantiateModule(ctx, c, r.cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer mod.Close(ctx)
	res, err := mod.ExportedFunction(abi.ExportDescribe).Call(ctx)
	if err != nil {
		t.Fatal(err)
	}
	b, err := readPacked(mod.Memory(), res[0])
	if err != nil {
		t.Fatal(err)
	}
	return b
}
