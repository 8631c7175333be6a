package host_test

import (
	"bytes"
	"context"
	"flag"
	"os"
	"path"
	"path/filepath"
	"testing"

	"github.com/toolhost/toolhost/abi"
	"github.com/toolhost/toolhost/internal/testkit/testwasm"
	"github.com/toolhost/toolhost/third_party/wazero"
	"github.com/toolhost/toolhost/third_party/wazero/api"
)

var updateManifests = flag.Bool("update-manifests", false, "rewrite testdata/manifests/*.json from the tool modules' toolhost_describe")

// TestToolManifestsUnchanged holds every example module (tools-src,
// tools-src-c, tools-src-rust, tools-src-as) to the exact manifest bytes
// its toolhost_describe returned when the golden files were written: a
// change to a guest SDK (how it reflects schemas, when it builds the
// manifest) must not change what any tool publishes. Rewrite them with
// -update-manifests only for a change meant to alter a manifest. Each
// module builds in its own subtest, so a missing toolchain skips only its
// language's modules.
func TestToolManifestsUnchanged(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and compiles every tool module")
	}
	root := testwasm.Root(t)
	type module struct {
		name, dir string
		build     func(t testing.TB, dir string) string
	}
	var mods []module
	for _, lang := range []struct {
		glob  string // one file in each module's folder
		build func(t testing.TB, dir string) string
	}{
		{"tools-src/*/main.go", func(t testing.TB, dir string) string { return testwasm.Go(t, "./"+dir) }},
		{"tools-src-c/*/*.c", testwasm.C},
		{"tools-src-rust/*/Cargo.toml", testwasm.Rust},
		{"tools-src-as/*/asconfig.json", testwasm.AS},
	} {
		found, _ := filepath.Glob(filepath.Join(root, filepath.FromSlash(lang.glob)))
		if len(found) == 0 {
			t.Fatalf("no %s", lang.glob)
		}
		for _, f := range found {
			dir := path.Dir(filepath.ToSlash(f[len(root)+1:]))
			if n := len(mods); n == 0 || mods[n-1].dir != dir {
				mods = append(mods, module{path.Base(dir), dir, lang.build})
			}
		}
	}
	raw := newRawRuntime(t)
	raw.stubEgress(t)
	for _, m := range mods {
		t.Run(m.name, func(t *testing.T) {
			got := raw.describe(t, raw.compile(t, m.build(t, m.dir)))
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
		NewFunctionBuilder().WithGoModuleFunction(refuse, i32x2, i32).Export(abi.ImportInput).
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
