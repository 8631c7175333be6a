//go:build unix

package host_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"runtime"
	"testing"

	"github.com/toolhost/toolhost/host"
	"github.com/toolhost/toolhost/internal/scaffold"
	"github.com/toolhost/toolhost/internal/testkit/testwasm"
)

// BenchmarkLanguages is the same tool in Go, C, Rust and AssemblyScript:
// the project `toolhost new NAME --lang L` writes (NAME.run counts the
// words of text and upper-cases it), built by its own Makefile as a user
// builds it, then called fresh (a new instance per call) and reused (one
// caller's warm instance). Run the arms interleaved (-count rounds run
// them all) and compare cpu-ns/op with benchstat; a language whose
// toolchain is missing is skipped with a note.
func BenchmarkLanguages(b *testing.B) {
	ctx := context.Background()
	root := testwasm.Root(b)
	rt := newRuntime(b, host.Config{})
	args := []byte(`{"text":"the cat and the hat","upper":true}`)
	const want = `{"text":"THE CAT AND THE HAT","words":5}`
	for _, lang := range []string{"go", "c", "rust", "as"} {
		path, skip := buildScaffold(b, root, lang)
		if skip != "" {
			b.Run(lang, func(b *testing.B) { b.Skip(skip) })
			continue
		}
		m, err := rt.LoadFile(ctx, path)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { m.Close(ctx) })
		for _, arm := range []struct {
			name string
			call func() ([]byte, error)
		}{
			{"fresh", func() ([]byte, error) { return m.Call(ctx, "bench.run", args, host.Limits{}) }},
			{"reuse", func() ([]byte, error) {
				return m.Do(ctx, host.Request{Tool: "bench.run", Args: args, Caller: "bench", Reuse: true})
			}},
		} {
			b.Run(arm.name+"-"+lang, func(b *testing.B) {
				if res, err := arm.call(); err != nil || !sameJSON(res, want) { // the warm instance, outside the loop
					b.Fatalf("bench.run = %s, %v; want %s", res, err, want)
				}
				m.WaitWarming()
				runtime.GC()
				b.ReportAllocs()
				cpu := processCPU()
				for b.Loop() {
					if _, err := arm.call(); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(processCPU()-cpu)/float64(b.N), "cpu-ns/op")
			})
		}
	}
}

// buildScaffold writes the `toolhost new bench --lang lang` project and
// builds it with its Makefile's build target (no manifest embedding:
// TOOLHOST=true), returning the module's path, or why it cannot here.
func buildScaffold(b *testing.B, root, lang string) (path, skip string) {
	b.Helper()
	dir := filepath.Join(b.TempDir(), "bench")
	o := scaffold.Options{Name: "bench", Lang: lang, Dir: dir, Plugins: b.TempDir(), Toolhost: "true"}
	env := append(os.Environ(), "GOFLAGS=-mod=mod", "GOPROXY=off", "GOWORK=off")
	switch lang {
	case "go":
		o.SDK = filepath.Join(root, "abi", "guest")
	case "rust":
		o.SDK = filepath.Join(root, "abi", "rust")
		tc := testwasm.RustToolchain(b, "the Rust arm")
		env = append(env, "CARGO="+tc["CARGO"], "RUSTC="+tc["RUSTC"], "TARGET="+tc["RUST_TARGET"])
	case "c":
		if _, err := exec.LookPath("clang"); err != nil {
			return "", "clang not found"
		}
	case "as":
		if _, err := exec.LookPath("npm"); err != nil {
			return "", "npm not found"
		}
	}
	if _, err := scaffold.Write(o); err != nil {
		b.Fatal(err)
	}
	mk := exec.Command("make", "-C", dir, "build")
	mk.Env = env
	if out, err := mk.CombinedOutput(); err != nil {
		b.Fatalf("make build (%s): %v\n%s", lang, err, out)
	}
	return filepath.Join(dir, "bench.wasm"), ""
}

// sameJSON reports whether got holds the JSON value want does.
func sameJSON(got []byte, want string) bool {
	var a, b any
	return json.Unmarshal(got, &a) == nil && json.Unmarshal([]byte(want), &b) == nil && reflect.DeepEqual(a, b)
}
