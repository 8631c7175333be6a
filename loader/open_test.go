package loader_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/toolhost/toolhost/host"
	"github.com/toolhost/toolhost/internal/testkit/testwasm"
	"github.com/toolhost/toolhost/loader"
)

// Loading a folder: good files serve, each bad one is skipped with its
// reason, a name clash names both files, and start-up writes one progress
// line per .wasm file, in file order.
func TestLoadFolder(t *testing.T) {
	ctx := context.Background()
	rt, err := host.New(ctx, host.Config{CacheDir: filepath.Join(os.TempDir(), "toolhost-test-cache"), DescribeTimeout: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.Close(ctx) })
	dir := t.TempDir()
	wat := func(name string) string { return testwasm.WAT(t, "host/testdata/wat/"+name+".wat") }
	// Files load in name order, so a-echo.wasm claims wat.echo before
	// c-dupname.wasm tries to.
	copyFile(t, wat("echo"), filepath.Join(dir, "a-echo.wasm"))
	copyFile(t, wat("badversion"), filepath.Join(dir, "b-badversion.wasm"))
	copyFile(t, wat("dupname"), filepath.Join(dir, "c-dupname.wasm"))
	copyFile(t, wat("garbage"), filepath.Join(dir, "d-garbage.wasm")) // loads: its fault is at call time
	copyFile(t, wat("describeloop"), filepath.Join(dir, "e-describeloop.wasm"))
	if err := os.WriteFile(filepath.Join(dir, "f-junk.wasm"), []byte("junk"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "README.txt"), []byte("not a module"), 0o644); err != nil {
		t.Fatal(err)
	}

	var progress strings.Builder
	res, err := loader.Load(ctx, rt, dir, loader.Options{Progress: &progress})
	if err != nil {
		t.Fatal(err)
	}
	var tools []string
	for _, tl := range res.Registry.List() {
		tools = append(tools, tl.Name+"@"+filepath.Base(tl.Module.Path))
	}
	if got := strings.Join(tools, " "); got != "wat.echo@a-echo.wasm wat.garbage@d-garbage.wasm" {
		t.Errorf("serving %s", got)
	}
	reasons := map[string]string{}
	for _, le := range res.Errors {
		reasons[filepath.Base(le.Path)] = le.Error()
	}
	wantErrs := map[string][]string{
		"b-badversion.wasm":   {"ABI version 2"},
		"c-dupname.wasm":      {"c-dupname.wasm", `tool "wat.echo" is also declared by`, "a-echo.wasm"},
		"e-describeloop.wasm": {"did not return within"},
		"f-junk.wasm":         {"not a valid WebAssembly module"},
	}
	if len(reasons) != len(wantErrs) {
		t.Errorf("load errors for %v, want %d files", reasons, len(wantErrs))
	}
	for file, wants := range wantErrs {
		for _, want := range wants {
			if !strings.Contains(reasons[file], want) {
				t.Errorf("%s: %q does not contain %q", file, reasons[file], want)
			}
		}
	}

	lines := strings.Split(strings.TrimSpace(progress.String()), "\n")
	wantLines := []string{
		"toolhost: load " + filepath.Join(dir, "a-echo.wasm") + ": 1 tool (wat.echo) in ",
		"toolhost: skip " + filepath.Join(dir, "b-badversion.wasm") + ": ",
		"toolhost: skip " + filepath.Join(dir, "c-dupname.wasm") + `: tool "wat.echo" is also declared by ` + filepath.Join(dir, "a-echo.wasm"),
		"toolhost: load " + filepath.Join(dir, "d-garbage.wasm") + ": 1 tool (wat.garbage) in ",
		"toolhost: skip " + filepath.Join(dir, "e-describeloop.wasm") + ": ",
		"toolhost: skip " + filepath.Join(dir, "f-junk.wasm") + ": ",
	}
	if len(lines) != len(wantLines) {
		t.Fatalf("progress has %d lines, want one per .wasm file (%d):\n%s", len(lines), len(wantLines), progress.String())
	}
	for i, want := range wantLines {
		if !strings.HasPrefix(lines[i], want) {
			t.Errorf("progress line %d = %q, want prefix %q", i, lines[i], want)
		}
	}

	echo, _ := res.Registry.Lookup("wat.echo")
	if out, err := echo.Handler.Handle(ctx, json.RawMessage(`[1,2]`)); err != nil || string(out) != `[1,2]` {
		t.Errorf("echo after Load = %s, %v", out, err)
	}
}

func TestLoadMissingFolder(t *testing.T) {
	if _, err := loader.Load(context.Background(), newRuntime(t), filepath.Join(t.TempDir(), "nope"), loader.Options{}); err == nil {
		t.Fatal("Load of a missing folder succeeded")
	}
}
