package loader_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolhost/toolhost/internal/testkit/testwasm"
	"github.com/toolhost/toolhost/loader"
)

// Issue 10 finding 14: a module refused at run time for a name clash took
// the name at the next start when its file sorted first, and the
// legitimate module's tools vanished. The file that held the name first
// keeps it, across restarts, by the owners record.
func TestNameOwnershipSurvivesRestart(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	owners := filepath.Join(t.TempDir(), "owners.json")
	opts := loader.Options{OwnersFile: owners}
	copyFile(t, testwasm.WAT(t, "host/testdata/wat/echo.wat"), filepath.Join(dir, "echo.wasm"))
	live, err := loader.Open(ctx, newRuntime(t), dir, opts, nil)
	if err != nil {
		t.Fatal(err)
	}
	// The newcomer sorts first ("0…" < "echo…") and declares wat.echo.
	copyFile(t, testwasm.WAT(t, "host/testdata/wat/dupname.wat"), filepath.Join(dir, "0dup.wasm"))
	ch, _ := live.Rescan(ctx)
	if len(ch.Errors) != 1 || filepath.Base(ch.Errors[0].Path) != "0dup.wasm" {
		t.Fatalf("run-time clash: %+v; want 0dup.wasm refused", ch.Errors)
	}
	live.Close()

	for restart := range 2 {
		res, err := loader.Load(ctx, newRuntime(t), dir, opts)
		if err != nil {
			t.Fatal(err)
		}
		tool, ok := res.Registry.Lookup("wat.echo")
		if !ok || filepath.Base(tool.Module.Path) != "echo.wasm" {
			t.Fatalf("restart %d: wat.echo served by %v; want echo.wasm, its first owner", restart, tool)
		}
		if len(res.Errors) != 1 || filepath.Base(res.Errors[0].Path) != "0dup.wasm" ||
			!strings.Contains(res.Errors[0].Reason, "first keeps it") {
			t.Fatalf("restart %d: refused %+v; want 0dup.wasm, saying why", restart, res.Errors)
		}
		res.Live.Close()
	}
	if b, err := os.ReadFile(owners); err != nil || !strings.Contains(string(b), `"wat.echo": "echo.wasm"`) {
		t.Fatalf("owners record: %s, %v", b, err)
	}
}
