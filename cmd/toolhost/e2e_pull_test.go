package main

import (
	"io"
	"log"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/registry"
	"github.com/toolhost/toolhost/internal/testkit/testwasm"
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
	cs := srv.watchTools(t)
	if cs.has(t, "counter_fresh") {
		t.Fatal("counter.fresh listed before the pull")
	}
	if _, errs, code := runCLI(t, "pull", "--plugins", dir, "--key", pub, repo+":v1"); code != 0 {
		t.Fatalf("pull: %d %s", code, errs)
	}
	cs.await(t, "counter_fresh", true, "the pull")
	if res := callTool(t, cs.ClientSession, "counter.fresh", map[string]any{}, nil); res.IsError {
		t.Fatalf("counter.fresh after the pull: %+v", res.Content)
	}
	if !cs.has(t, "wat_echo") {
		t.Error("the module that was already there is gone")
	}
}
