package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolhost/toolhost/internal/testkit/testwasm"
)

// TestNewProjectServed: `toolhost new` writes a project outside the
// repository in each language; its make test passes, and its make builds
// the module into the folder of a running server, which lists the tool
// (after tools/list_changed) and calls it: a result and the tool's own
// schema error.
func TestNewProjectServed(t *testing.T) {
	if testing.Short() {
		t.Skip("builds tool modules from scratch")
	}
	root := testwasm.Root(t)
	plugins := t.TempDir()
	srv := startServer(t, plugins)
	cs := srv.watchTools(t)

	for _, tc := range []struct{ name, lang, needs, sdk string }{
		{"greet", "go", "go", "abi/guest"},
		{"wc", "c", "clang", ""},
		{"stats", "rust", "", "abi/rust"},
		{"kit", "as", "npm", ""},
	} {
		t.Run(tc.lang, func(t *testing.T) {
			// The Go project's build must not reach the network for the
			// SDK (its go.mod replaces it with the checkout's).
			env := append(os.Environ(), "GOFLAGS=-mod=mod", "GOPROXY=off", "GOWORK=off")
			if tc.lang == "rust" {
				rust := testwasm.RustToolchain(t, "a toolhost new Rust project")
				env = append(env, "CARGO="+rust["CARGO"], "RUSTC="+rust["RUSTC"], "TARGET="+rust["RUST_TARGET"])
			} else if _, err := exec.LookPath(tc.needs); err != nil {
				if os.Getenv("CI") != "" {
					t.Fatalf("%s not found (.ci/run installs it)", tc.needs)
				}
				t.Skipf("%s not found: install it to build a %s project", tc.needs, tc.lang)
			}
			dir := filepath.Join(t.TempDir(), tc.name)
			args := []string{"new", tc.name, "--lang", tc.lang, "--dir", dir, "--plugins", plugins}
			if tc.sdk != "" {
				args = append(args, "--sdk", filepath.Join(root, filepath.FromSlash(tc.sdk)))
			}
			out, errOut, code := runBinary(t, nil, args...)
			if code != 0 {
				t.Fatalf("new: exit %d: %s%s", code, out, errOut)
			}
			for _, target := range []string{"test", "install"} {
				mk := exec.Command("make", "-C", dir, target)
				mk.Env = env
				if b, err := mk.CombinedOutput(); err != nil {
					t.Fatalf("make %s: %v\n%s", target, err, b)
				}
			}
			tool := tc.name + ".run"
			cs.await(t, tc.name+"_run", true, "make put "+tc.name+".wasm in the plugins folder")
			res := callTool(t, cs.ClientSession, tool, map[string]any{"text": "hello tool host", "upper": true}, nil)
			if res.IsError || !strings.Contains(textOf(res), `"HELLO TOOL HOST"`) || !strings.Contains(textOf(res), `"words":3`) {
				t.Fatalf("%s = %s", tool, textOf(res))
			}
			res = callTool(t, cs.ClientSession, tool, map[string]any{"text": "  "}, nil)
			if de := envelope(t, res); de.Kind != "schema" || !strings.Contains(de.Message, "text is empty") {
				t.Fatalf("%s of a blank text = %+v, want its schema error", tool, de)
			}
		})
	}
}
