package main

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
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
	"github.com/secure-systems-lab/go-securesystemslib/encrypted"
	"github.com/toolhost/toolhost/internal/oci"
	"github.com/toolhost/toolhost/internal/testkit/testwasm"
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
	keys := t.TempDir()
	priv, pub := writeKeyPair(t, keys, "cosign")
	_, otherPub := writeKeyPair(t, keys, "other")
	out, errs, code := runCLI(t, "push", "--sign", priv, echo, repo+":v1")
	if code != 0 {
		t.Fatalf("push: %d %s", code, errs)
	}
	pinned := strings.TrimSpace(out)
	if !strings.HasPrefix(pinned, repo+"@sha256:") {
		t.Fatalf("push printed %q", out)
	}
	digest := strings.TrimPrefix(pinned, repo+"@")

	dir := filepath.Join(t.TempDir(), "plugins")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, "no trusted key"},
		{[]string{"--key", otherPub}, "no signature by a trusted signer"},
	} {
		_, errs, code := runCLI(t, append(append([]string{"pull", "--plugins", dir}, tc.args...), repo+":v1")...)
		if code == 0 || !strings.Contains(errs, tc.want) {
			t.Fatalf("pull %v: %d %q, want %q", tc.args, code, errs, tc.want)
		}
		if _, err := os.Stat(filepath.Join(dir, "echo.wasm")); err == nil {
			t.Fatalf("pull %v wrote the module", tc.args)
		}
	}
	if _, errs, code := runCLI(t, "pull", "--plugins", dir, "--key", otherPub, "--key", pub, repo+":v1"); code != 0 {
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
	if k, err := oci.LoadPublicKey(pub); err != nil || lock.Modules[0].Signer != k.ID {
		t.Fatalf("lock signer %q, want %s (%v)", lock.Modules[0].Signer, k.ID, err)
	}
	layer = lock.Modules[0].ModuleDigest

	if _, errs, code := runCLI(t, "pull", "--plugins", dir, "--key", pub, pinned); code != 0 {
		t.Fatalf("pull by digest: %d %s", code, errs)
	}
	// The key from the config file's [trust], relative to its folder.
	cfg := filepath.Join(keys, "toolhost.toml")
	if err := os.WriteFile(cfg, []byte("[trust]\nkeys = [\"other.pub\", \"cosign.pub\"]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, errs, code := runCLI(t, "pull", "--plugins", dir, "--config", cfg, pinned); code != 0 {
		t.Fatalf("pull with [trust] keys: %d %s", code, errs)
	}

	// An unsigned module: refused with a key, written without checking
	// only when asked.
	if _, errs, code := runCLI(t, "push", other, repo+":unsigned"); code != 0 {
		t.Fatalf("push: %d %s", code, errs)
	}
	other2 := filepath.Join(t.TempDir(), "plugins")
	if _, errs, code := runCLI(t, "pull", "--plugins", other2, "--key", pub, repo+":unsigned"); code == 0 || !strings.Contains(errs, "no signature") {
		t.Fatalf("unsigned pull: %d %q", code, errs)
	}
	if _, errs, code := runCLI(t, "pull", "--plugins", other2, "--insecure-skip-verify", repo+":unsigned"); code != 0 {
		t.Fatalf("unsigned pull, skipping verification: %d %q", code, errs)
	}

	// The tag moves to another module; the lock still pins the first.
	if _, errs, code := runCLI(t, "push", other, repo+":v1"); code != 0 {
		t.Fatalf("push: %d %s", code, errs)
	}
	os.Remove(filepath.Join(dir, "echo.wasm"))
	if _, errs, code := runCLI(t, "pull", "--plugins", dir, "--key", pub); code != 0 {
		t.Fatalf("re-pull: %d %s", code, errs)
	}
	assertFile(t, filepath.Join(dir, "echo.wasm"), want)

	// A tampered layer is refused and the file in the folder is untouched.
	tamper.Store(true)
	_, errs, code = runCLI(t, "pull", "--plugins", dir, "--key", pub)
	if code == 0 || !strings.Contains(errs, "digest mismatch") {
		t.Fatalf("tampered re-pull: %d %q", code, errs)
	}
	assertFile(t, filepath.Join(dir, "echo.wasm"), want)
	entries, _ := os.ReadDir(dir)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	// The lock file's flock sidecar stays; no temporary file does.
	if strings.Join(names, " ") != ".toolhost.lock.flock echo.wasm toolhost.lock" {
		t.Errorf("plugins folder holds %q, want echo.wasm, toolhost.lock and its .toolhost.lock.flock", names)
	}
}

// writeKeyPair writes an ECDSA P-256 key pair (cosign's default) as
// dir/NAME.key (encrypted as cosign does, with $COSIGN_PASSWORD) and
// dir/NAME.pub.
func writeKeyPair(t *testing.T, dir, name string) (priv, pub string) {
	t.Helper()
	t.Setenv("COSIGN_PASSWORD", "test password")
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.MarshalPKCS8PrivateKey(k)
	if err != nil {
		t.Fatal(err)
	}
	enc, err := encrypted.Encrypt(der, []byte("test password"))
	if err != nil {
		t.Fatal(err)
	}
	pubDER, err := x509.MarshalPKIXPublicKey(&k.PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	priv, pub = filepath.Join(dir, name+".key"), filepath.Join(dir, name+".pub")
	if err := os.WriteFile(priv, pem.EncodeToMemory(&pem.Block{Type: "ENCRYPTED SIGSTORE PRIVATE KEY", Bytes: enc}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(pub, pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pubDER}), 0o644); err != nil {
		t.Fatal(err)
	}
	return priv, pub
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
	_, errs, code = runCLI(t, "pull", "--plugins", t.TempDir(), "--insecure-skip-verify")
	if code == 0 || !strings.Contains(errs, "records no modules") {
		t.Fatalf("%d %q", code, errs)
	}
}

// A registry that asks for basic credentials: push and pull with the
// config file's [registries."HOST"] (the password a secret reference from
// the environment); without it, refused with the registry's answer.
func TestPushPullConfigCredentials(t *testing.T) {
	t.Setenv("DOCKER_CONFIG", t.TempDir()) // no credentials of the machine's
	h := registry.New(registry.Logger(log.New(io.Discard, "", 0)))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if u, p, ok := r.BasicAuth(); !ok || u != "bot" || p != "s3cret-token" {
			w.Header().Set("WWW-Authenticate", `Basic realm="test"`)
			http.Error(w, `{"errors":[{"code":"UNAUTHORIZED","message":"authentication required"}]}`, http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	}))
	defer srv.Close()
	host := strings.TrimPrefix(srv.URL, "http://")
	repo := "oci://" + host + "/tools/echo:v1"
	echo := testwasm.WAT(t, "host/testdata/wat/echo.wat")

	if _, errs, code := runCLI(t, "push", echo, repo); code == 0 || !strings.Contains(errs, "authentication") {
		t.Fatalf("push without credentials: %d %q, want the registry's refusal", code, errs)
	}
	cfg := filepath.Join(t.TempDir(), "toolhost.toml")
	body := "[registries.\"" + host + "\"]\nusername = \"bot\"\npassword = {env = \"TEST_REGISTRY_TOKEN\"}\n"
	if err := os.WriteFile(cfg, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, errs, code := runCLI(t, "push", "--config", cfg, echo, repo); code == 0 || !strings.Contains(errs, "TEST_REGISTRY_TOKEN is not set") {
		t.Fatalf("push with an unset secret: %d %q, want it named", code, errs)
	}
	t.Setenv("TEST_REGISTRY_TOKEN", "s3cret-token")
	if _, errs, code := runCLI(t, "push", "--config", cfg, echo, repo); code != 0 {
		t.Fatalf("push with the config's credentials: %d %s", code, errs)
	}
	dir := t.TempDir()
	if _, errs, code := runCLI(t, "pull", "--config", cfg, "--insecure-skip-verify", "--plugins", dir, repo); code != 0 {
		t.Fatalf("pull with the config's credentials: %d %s", code, errs)
	}
	want, _ := os.ReadFile(echo)
	assertFile(t, filepath.Join(dir, "echo.wasm"), want)
}
