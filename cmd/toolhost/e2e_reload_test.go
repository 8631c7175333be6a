package main

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolhost/toolhost/internal/testwasm"
)

// Dropping a module into a served folder adds its tools and tells MCP
// clients; deleting it removes them, and their breakers.
func TestE2EHotReload(t *testing.T) {
	dir := testwasm.Dir(t, testwasm.WAT(t, "host/testdata/wat/echo.wat"))
	srv := startServer(t, dir)
	changed := make(chan struct{}, 16)
	c := mcp.NewClient(&mcp.Implementation{Name: "e2e-reload", Version: "test"}, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { changed <- struct{}{} },
	})
	cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: srv.url}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	has := func(name string) bool {
		res, err := cs.ListTools(context.Background(), nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, tool := range res.Tools {
			if tool.Name == name {
				return true
			}
		}
		return false
	}
	waitChange := func(what string) {
		select {
		case <-changed:
		case <-time.After(time.Minute):
			t.Fatalf("no tools/list_changed notification after %s", what)
		}
	}
	if has("math_eval") {
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
	waitChange("adding math.wasm")
	for !has("math_eval") { // several notifications may arrive for one reload
		waitChange("adding math.wasm")
	}
	if res := callTool(t, cs, "math.eval", map[string]any{"expr": "6*7"}, nil); res.IsError || textOf(res) == "" {
		t.Fatalf("math.eval after hot reload: %+v", res.Content)
	}
	removed := followEvents(t, srv.url, "breaker.removed")
	if err := os.Remove(filepath.Join(dir, "math.wasm")); err != nil {
		t.Fatal(err)
	}
	for has("math_eval") {
		waitChange("removing math.wasm")
	}
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
	if de := envelope(t, callTool(t, cs, "math.eval", map[string]any{"expr": "1"}, nil)); de.Kind != "not_found" {
		t.Fatalf("math.eval after removal: %+v", de)
	}
}
