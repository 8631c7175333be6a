package main

import (
	"bytes"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-containerregistry/pkg/registry"
	"github.com/toolhost/toolhost/internal/testwasm"
	"github.com/toolhost/toolhost/oci"
)

// TestPushPullLock pushes a module to an in-process registry, pulls it by
// tag and by digest into a plugins folder, and re-pulls what the lock pins
// after the tag has moved to another module.
func TestPushPullLock(t *testing.T) {
	t.Setenv("DOCKER_CONFIG", t.TempDir()) // no credentials of the machine's
	var tamper atomic.Bool                 // set after layer is
	var layer string
	h := registry.New(registry.Logger(log.New(io.Discard, "", 0)))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if tamper.Load() && r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, layer) {
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, r)
			b := rec.Body.Bytes()
			b[len(b)-1] ^= 1
			w.WriteHeader(rec.Code)
			w.Write(b)
			return
		}
		h.ServeHTTP(w, r)
	}))
	defer srv.Close()
	repo := "oci://" + strings.TrimPrefix(srv.URL, "http://") + "/tools/echo"

	echo := testwasm.WAT(t, "host/testdata/wat/echo.wat")
	other := testwasm.WAT(t, "host/testdata/wat/counter.wat")
	out, errs, code := runCLI(t, "push", echo, repo+":v1")
	if code != 0 {
		t.Fatalf("push: %d %s", code, errs)
	}
	pinned := strings.TrimSpace(out)
	if !strings.HasPrefix(pinned, repo+"@sha256:") {
		t.Fatalf("push printed %q", out)
	}
	digest := strings.TrimPrefix(pinned, repo+"@")

	dir := filepath.Join(t.TempDir(), "plugins")
	if _, errs, code := runCLI(t, "pull", "--plugins", dir, repo+":v1"); code != 0 {
		t.Fatalf("pull by tag: %d %s", code, errs)
	}
	want, _ := os.ReadFile(echo)
	assertFile(t, filepath.Join(dir, "echo.wasm"), want)
	lock, err := oci.ReadLock(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(lock.Modules) != 1 || lock.Modules[0].Name != "echo.wasm" || lock.Modules[0].Reference != repo+":v1" || lock.Modules[0].Digest != digest {
		t.Fatalf("lock %+v, want echo.wasm %s:v1 %s", lock.Modules, repo, digest)
	}
	layer = lock.Modules[0].ModuleDigest

	if _, errs, code := runCLI(t, "pull", "--plugins", dir, pinned); code != 0 {
		t.Fatalf("pull by digest: %d %s", code, errs)
	}

	// The tag moves to another module; the lock still pins the first.
	if _, errs, code := runCLI(t, "push", other, repo+":v1"); code != 0 {
		t.Fatalf("push: %d %s", code, errs)
	}
	os.Remove(filepath.Join(dir, "echo.wasm"))
	if _, errs, code := runCLI(t, "pull", "--plugins", dir); code != 0 {
		t.Fatalf("re-pull: %d %s", code, errs)
	}
	assertFile(t, filepath.Join(dir, "echo.wasm"), want)

	// A tampered layer is refused and the file in the folder is untouched.
	tamper.Store(true)
	_, errs, code = runCLI(t, "pull", "--plugins", dir)
	if code == 0 || !strings.Contains(errs, "digest mismatch") {
		t.Fatalf("tampered re-pull: %d %q", code, errs)
	}
	assertFile(t, filepath.Join(dir, "echo.wasm"), want)
	entries, _ := os.ReadDir(dir)
	if len(entries) != 2 {
		t.Errorf("plugins folder holds %d entries, want echo.wasm and toolhost.lock", len(entries))
	}
}

func assertFile(t *testing.T, path string, want []byte) {
	t.Helper()
	got, err := os.ReadFile(path)
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("%s: %v, %d bytes, want %d", path, err, len(got), len(want))
	}
}

func TestPullRefusesBadReference(t *testing.T) {
	_, errs, code := runCLI(t, "pull", "--plugins", t.TempDir(), "ghcr.io/acme/echo:v1")
	if code == 0 || !strings.Contains(errs, "must start with oci://") {
		t.Fatalf("%d %q", code, errs)
	}
	_, errs, code = runCLI(t, "pull", "--plugins", t.TempDir())
	if code == 0 || !strings.Contains(errs, "records no modules") {
		t.Fatalf("%d %q", code, errs)
	}
}
