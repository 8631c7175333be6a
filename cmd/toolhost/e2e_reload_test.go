package main

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/toolhost/toolhost/internal/testkit/testwasm"
)

// Dropping a module into a served folder adds its tools and tells MCP
// clients; deleting it removes them, and their breakers.
func TestE2EHotReload(t *testing.T) {
	dir := testwasm.Dir(t, testwasm.WAT(t, "host/testdata/wat/echo.wat"))
	srv := startServer(t, dir)
	cs := srv.watchTools(t)
	if cs.has(t, "math_eval") {
		t.Fatal("math.eval listed before its module was dropped in")
	}
	src, err := os.ReadFile(testwasm.Go(t, "./tools-src/mathtools"))
	if err != nil {
		t.Fatal(err)
	}
	// Write under another name and rename: how a deploy should drop a file.
	tmp := filepath.Join(dir, "math.wasm.part")
	if err := os.WriteFile(tmp, src, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, filepath.Join(dir, "math.wasm")); err != nil {
		t.Fatal(err)
	}
	cs.await(t, "math_eval", true, "adding math.wasm")
	if res := callTool(t, cs.ClientSession, "math.eval", map[string]any{"expr": "6*7"}, nil); res.IsError || textOf(res) == "" {
		t.Fatalf("math.eval after hot reload: %+v", res.Content)
	}
	removed := followEvents(t, srv.url, "breaker.removed")
	if err := os.Remove(filepath.Join(dir, "math.wasm")); err != nil {
		t.Fatal(err)
	}
	cs.await(t, "math_eval", false, "removing math.wasm")
	// Its breaker goes with it, and with the breaker its metric series
	// (issue 27 item 2; TestSeriesFollowLoadedTools, metrics/, checks
	// the series).
	for gone := false; !gone; {
		select {
		case e := <-removed:
			gone = e.Data.Tool == "math.eval"
		case <-time.After(time.Minute):
			t.Fatal("no breaker.removed event for math.eval after its module was removed")
		}
	}
	if de := envelope(t, callTool(t, cs.ClientSession, "math.eval", map[string]any{"expr": "1"}, nil)); de.Kind != "not_found" {
		t.Fatalf("math.eval after removal: %+v", de)
	}
}
