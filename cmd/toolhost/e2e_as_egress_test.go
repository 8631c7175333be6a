package main

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolhost/toolhost/internal/testkit/testwasm"
)

// TestASEgress: the AssemblyScript SDK's fetch through toolhost's governed
// egress: refused without a grant (an internal error naming it), answered
// by a loopback upstream with one, and a 429 made a transient error.
func TestASEgress(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/busy" {
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(http.StatusTooManyRequests)
			return
		}
		w.Header().Set("Content-Type", "text/plain")
		fmt.Fprint(w, "hello \"as\" é")
	}))
	defer up.Close()
	b, err := os.ReadFile(testwasm.AS(t, "abi/assemblyscript/testdata/egress"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "asfetch.wasm"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	hostport := strings.TrimPrefix(up.URL, "http://")

	bare := startServer(t, dir)
	_, errOut, code := bare.cli(t, "call", "as.fetch", `{"url":"`+up.URL+`/x"}`)
	if code == 0 || !strings.Contains(errOut, "egress denied") {
		t.Fatalf("without a grant: exit %d, %s", code, errOut)
	}

	conf := writeFile(t, "toolhost.toml", fmt.Sprintf(`[grants."asfetch.wasm"]
hosts = ["%s"]
schemes = ["http"]
allow_networks = ["127.0.0.0/8"]
`, hostport))
	srv := startServer(t, dir, "--config", conf)
	out, errOut, code := srv.cli(t, "call", "as.fetch", `{"url":"`+up.URL+`/x"}`)
	if code != 0 || !strings.Contains(out, `"body":"hello \"as\" é"`) || !strings.Contains(out, `"status":200`) || !strings.Contains(out, `"type":"text/plain"`) {
		t.Fatalf("with a grant: exit %d, %s %s", code, out, errOut)
	}
	_, errOut, code = srv.cli(t, "call", "--timeout", "10s", "as.fetch", `{"url":"`+up.URL+`/busy"}`)
	if code == 0 || !strings.Contains(errOut, "transient") || !strings.Contains(errOut, "429") {
		t.Fatalf("429: exit %d, %s", code, errOut)
	}
}
