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
	testwasm.StubToolhostV1(t, raw.rt)
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
