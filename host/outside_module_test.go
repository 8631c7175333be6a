package host_test

import (
	"archive/zip"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/toolhost/toolhost/host"
	"github.com/toolhost/toolhost/internal/testkit/testwasm"
)

const (
	sdkModule  = "github.com/toolhost/toolhost/abi/guest"
	sdkVersion = "v0.1.0"
)

// TestToolFromOutsideModule builds the README's Go example the way a tool
// author would: in a module of their own, outside the repository, with one
// `go get` of the SDK and no replace. The SDK comes from a module proxy on
// disk made from abi/guest (this machine reaches no published copy), into
// an empty module cache, so nothing of the server's module can leak in;
// the author's module must end up requiring the SDK and nothing else, and
// the module it builds must serve.
func TestToolFromOutsideModule(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a Go guest from scratch")
	}
	root := testwasm.Root(t)
	proxy := t.TempDir()
	writeProxy(t, proxy, filepath.Join(root, "abi", "guest"))

	src := readmeExample(t, filepath.Join(root, "README.md"))
	dir := t.TempDir()
	write(t, filepath.Join(dir, "go.mod"), "module example.com/greet\n\ngo 1.26\n")
	write(t, filepath.Join(dir, "main.go"), src)

	env := append(os.Environ(),
		"GOPROXY=file://"+filepath.ToSlash(proxy),
		"GOSUMDB=off", "GOWORK=off", "GOTOOLCHAIN=local", "GOFLAGS=-modcacherw",
		"GOMODCACHE="+t.TempDir())
	run := func(extra []string, args ...string) string {
		t.Helper()
		cmd := exec.Command("go", args...)
		cmd.Dir = dir
		cmd.Env = append(env, extra...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	run(nil, "get", sdkModule+"@"+sdkVersion)
	if got, want := strings.Fields(run(nil, "list", "-m", "all")), []string{"example.com/greet", sdkModule, sdkVersion}; strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("go list -m all = %v, want only the SDK %v", got, want)
	}
	wasm := filepath.Join(dir, "greet.wasm")
	run([]string{"GOOS=wasip1", "GOARCH=wasm"}, "build", "-buildmode=c-shared", "-o", wasm, ".")

	ctx := context.Background()
	rt, err := host.New(ctx, host.Config{CacheDir: "off"})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close(ctx)
	mod, err := rt.LoadFile(ctx, wasm)
	if err != nil {
		t.Fatal(err)
	}
	defer mod.Close(ctx)
	res, err := mod.Call(ctx, "demo.greet", []byte(`{"name":"Ada","shout":true}`), host.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if string(res) != `{"text":"HELLO, ADA!"}` {
		t.Errorf("demo.greet = %s", res)
	}
}

// readmeExample returns the README's Go tool example, the fenced block
// that starts with its file name, greet/main.go.
func readmeExample(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile("(?s)```go\n(// greet/main.go\n.*?)```").FindSubmatch(b)
	if m == nil {
		t.Fatal("README.md has no Go block starting // greet/main.go")
	}
	return string(m[1])
}

// writeProxy lays out a GOPROXY folder (the module proxy protocol's
// list, .info, .mod and .zip files) serving the module in dir at
// sdkVersion. The zip holds the module's files as the go command's own
// zips do: every regular file under dir, none of a nested module.
func writeProxy(t *testing.T, proxy, dir string) {
	t.Helper()
	at := filepath.Join(proxy, filepath.FromSlash(sdkModule), "@v")
	if err := os.MkdirAll(at, 0o755); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(at, "list"), sdkVersion+"\n")
	write(t, filepath.Join(at, sdkVersion+".info"), `{"Version":"`+sdkVersion+`","Time":"2026-12-01T00:00:00Z"}`)
	mod, err := os.ReadFile(filepath.Join(dir, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(at, sdkVersion+".mod"), string(mod))

	f, err := os.Create(filepath.Join(at, sdkVersion+".zip"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zw := zip.NewWriter(f)
	err = filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !d.Type().IsRegular() {
			return err
		}
		rel, err := filepath.Rel(dir, path)
		if err != nil {
			return err
		}
		if strings.Contains(filepath.ToSlash(rel), "/") && filepath.Base(rel) == "go.mod" {
			return nil // a nested module is not part of this one
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		w, err := zw.Create(sdkModule + "@" + sdkVersion + "/" + filepath.ToSlash(rel))
		if err != nil {
			return err
		}
		_, err = w.Write(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
}

func write(t *testing.T, path, s string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}
