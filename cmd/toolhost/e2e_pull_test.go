package main

import (
	"context"
	"io"
	"log"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/registry"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolhost/toolhost/internal/testwasm"
)

// A signed module pulled into a served folder is hot-loaded: its tools are
// listed (after tools/list_changed) and answer calls. The registry is
// go-containerregistry's in-process one on loopback.
func TestE2EPullHotLoads(t *testing.T) {
	t.Setenv("DOCKER_CONFIG", t.TempDir())
	srvReg := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	defer srvReg.Close()
	repo := "oci://" + strings.TrimPrefix(srvReg.URL, "http://") + "/tools/counter"
	priv, pub := writeKeyPair(t, t.TempDir(), "cosign")
	if _, errs, code := runCLI(t, "push", "--sign", priv, testwasm.WAT(t, "host/testdata/wat/counter.wat"), repo+":v1"); code != 0 {
		t.Fatalf("push: %d %s", code, errs)
	}

	dir := testwasm.Dir(t, testwasm.WAT(t, "host/testdata/wat/echo.wat"))
	srv := startServer(t, dir)
	changed := make(chan struct{}, 16)
	c := mcp.NewClient(&mcp.Implementation{Name: "e2e-pull", Version: "test"}, &mcp.ClientOptions{
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
	if has("counter_fresh") {
		t.Fatal("counter.fresh listed before the pull")
	}
	if _, errs, code := runCLI(t, "pull", "--plugins", dir, "--key", pub, repo+":v1"); code != 0 {
		t.Fatalf("pull: %d %s", code, errs)
	}
	for !has("counter_fresh") { // several notifications may arrive for one reload
		select {
		case <-changed:
		case <-time.After(time.Minute):
			t.Fatalf("no tools/list_changed after the pull; server log:\n%s", srv.stderr.String())
		}
	}
	if res := callTool(t, cs, "counter.fresh", map[string]any{}, nil); res.IsError {
		t.Fatalf("counter.fresh after the pull: %+v", res.Content)
	}
	if !has("wat_echo") {
		t.Error("the module that was already there is gone")
	}
}
