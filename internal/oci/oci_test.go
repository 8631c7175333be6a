package oci

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// module is the smallest valid core module, plus a custom section so
// that tests can tell two modules apart.
func module(tag string) []byte {
	b := []byte("\x00asm\x01\x00\x00\x00")
	payload := append([]byte{byte(len(tag))}, tag...)
	return append(append(b, 0, byte(len(payload))), payload...)
}

// anonymous finds no credentials (and reads no Docker config file).
var anonymous = authn.NewMultiKeychain()

// serve runs go-containerregistry's in-process registry on loopback,
// behind wrap when it is given, and returns its host:port.
func serve(t *testing.T, wrap func(http.Handler) http.Handler) string {
	t.Helper()
	var h http.Handler = registry.New(registry.Logger(log.New(io.Discard, "", 0)))
	if wrap != nil {
		h = wrap(h)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return strings.TrimPrefix(srv.URL, "http://")
}

func ref(t *testing.T, s string) Reference {
	t.Helper()
	r, err := ParseReference(s, nil)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestPushThenPullByTagAndDigest(t *testing.T) {
	host := serve(t, nil)
	c := New(Options{Keychain: anonymous})
	mod := module("echo")
	pinned, err := c.Push(t.Context(), ref(t, "oci://"+host+"/tools/echo:v1"), mod)
	if err != nil {
		t.Fatal(err)
	}
	// The same module gives the same manifest: pushes are reproducible.
	again, err := c.Push(t.Context(), ref(t, "oci://"+host+"/tools/echo:v2"), mod)
	if err != nil || again.Digest() != pinned.Digest() {
		t.Fatalf("second push: %v, digest %s, want %s", err, again.Digest(), pinned.Digest())
	}
	for _, r := range []string{"oci://" + host + "/tools/echo:v1", pinned.String()} {
		a, err := c.Pull(t.Context(), ref(t, r))
		if err != nil {
			t.Fatalf("pull %s: %v", r, err)
		}
		if !bytes.Equal(a.Module, mod) || a.Digest != pinned.Digest() || a.Ref.String() != pinned.String() {
			t.Errorf("pull %s: digest %s ref %s, want %s", r, a.Digest, a.Ref, pinned)
		}
		if a.LayerDigest != sha256Digest(mod) {
			t.Errorf("layer digest %s", a.LayerDigest)
		}
	}
}

// tamper rewrites the bodies of GET responses whose path ends in suffix.
func tamper(suffix string, edit func([]byte) []byte) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method != http.MethodGet || !strings.HasSuffix(r.URL.Path, suffix) {
				next.ServeHTTP(w, r)
				return
			}
			rec := httptest.NewRecorder()
			next.ServeHTTP(rec, r)
			body := edit(rec.Body.Bytes())
			for k, v := range rec.Header() {
				w.Header()[k] = v
			}
			w.Header().Del("Content-Length")
			w.WriteHeader(rec.Code)
			w.Write(body)
		})
	}
}

func flipLast(b []byte) []byte {
	b = bytes.Clone(b)
	b[len(b)-1] ^= 1
	return b
}

func TestPullRefusals(t *testing.T) {
	mod := module("echo")
	layer := sha256Digest(mod)
	cases := []struct {
		name string
		wrap func(http.Handler) http.Handler
		opts Options
		ref  func(host, digest string) string
		want error
	}{
		{name: "tampered layer", wrap: tamper(layer, flipLast), want: ErrDigestMismatch},
		{name: "truncated layer", wrap: tamper(layer, func(b []byte) []byte { return b[:len(b)-1] }), want: ErrDigestMismatch},
		{name: "manifest changed under its digest", wrap: tamper("/manifests/v1", func(b []byte) []byte {
			return bytes.Replace(b, []byte(`"schemaVersion":2`), []byte(`"schemaVersion": 2`), 1)
		}),
			want: ErrDigestMismatch},
		{name: "pinned digest the registry lies about", wrap: func(next http.Handler) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				// Serve the v1 manifest for any digest asked for.
				if strings.Contains(r.URL.Path, "/manifests/sha256:") {
					r.URL.Path = r.URL.Path[:strings.Index(r.URL.Path, "/manifests/")] + "/manifests/v1"
				}
				next.ServeHTTP(w, r)
			})
		}, ref: func(host, _ string) string { return "oci://" + host + "/tools/echo@sha256:" + strings.Repeat("0", 64) }, want: ErrDigestMismatch},
		{name: "layer over the cap", opts: Options{MaxLayer: int64(len(mod) - 1)}, want: ErrTooLarge},
		{name: "manifest over the cap", opts: Options{MaxManifest: 100}, want: ErrTooLarge},
		{name: "unknown tag", ref: func(host, _ string) string { return "oci://" + host + "/tools/echo:nope" }, want: ErrNotFound},
		{name: "unknown repository", ref: func(host, _ string) string { return "oci://" + host + "/tools/other:v1" }, want: ErrNotFound},
		{name: "not a wasm module", ref: func(host, _ string) string { return "oci://" + host + "/tools/text:v1" }, want: ErrNotWasm},
		{name: "a container image", ref: func(host, _ string) string { return "oci://" + host + "/tools/image:v1" }, want: ErrNotWasm},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			host := serve(t, tc.wrap)
			pusher := New(Options{Keychain: anonymous})
			pinned, err := pusher.Push(t.Context(), ref(t, "oci://"+host+"/tools/echo:v1"), mod)
			if err != nil {
				t.Fatal(err)
			}
			pushNotWasm(t, host)
			r := "oci://" + host + "/tools/echo:v1"
			if tc.ref != nil {
				r = tc.ref(host, pinned.Digest())
			}
			opts := tc.opts
			opts.Keychain = anonymous
			a, err := New(opts).Pull(t.Context(), ref(t, r))
			if !errors.Is(err, tc.want) {
				t.Fatalf("pull %s: %v (artifact %v), want %v", r, err, a, tc.want)
			}
			var e *Error
			if !errors.As(err, &e) || e.Ref != r {
				t.Errorf("error %#v does not name %s", err, r)
			}
			t.Log(err)
		})
	}
}

// pushNotWasm publishes two artifacts that are not modules: the wasm
// layout around bytes that are not wasm (bypassing Push's check), and a
// container image.
func pushNotWasm(t *testing.T, host string) {
	t.Helper()
	_, m, err := artifact([]byte("#!/bin/sh\n"))
	if err != nil {
		t.Fatal(err)
	}
	c := New(Options{Keychain: anonymous})
	r := ref(t, "oci://"+host+"/tools/text:v1")
	// Write the blobs and the manifest as Push does, without its check.
	ctx := t.Context()
	if err := pushRaw(ctx, c, r, []byte("#!/bin/sh\n"), m); err != nil {
		t.Fatal(err)
	}
	img, err := random.Image(64, 1)
	if err != nil {
		t.Fatal(err)
	}
	imgRef, err := name.ParseReference(host + "/tools/image:v1")
	if err != nil {
		t.Fatal(err)
	}
	if err := remote.Write(imgRef, img); err != nil {
		t.Fatal(err)
	}
}

func pushRaw(ctx context.Context, c *Client, r Reference, module, m []byte) error {
	config, _, err := artifact(module)
	if err != nil {
		return err
	}
	return c.putArtifact(ctx, r, config, module, m)
}

func TestAuth(t *testing.T) {
	host := serve(t, func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if u, p, ok := r.BasicAuth(); !ok || u != "alice" || p != "s3cret" {
				w.Header().Set("WWW-Authenticate", `Basic realm="test"`)
				w.WriteHeader(http.StatusUnauthorized)
				return
			}
			next.ServeHTTP(w, r)
		})
	})
	r := ref(t, "oci://"+host+"/tools/echo:v1")
	if _, err := New(Options{Keychain: anonymous}).Push(t.Context(), r, module("x")); !errors.Is(err, ErrAuth) {
		t.Fatalf("anonymous push: %v, want ErrAuth", err)
	}
	alice := New(Options{Keychain: staticKeychain{authn.AuthConfig{Username: "alice", Password: "s3cret"}}})
	if _, err := alice.Push(t.Context(), r, module("x")); err != nil {
		t.Fatal(err)
	}
	if _, err := alice.Pull(t.Context(), r); err != nil {
		t.Fatal(err)
	}
	if _, err := New(Options{Keychain: anonymous}).Pull(t.Context(), r); !errors.Is(err, ErrAuth) {
		t.Fatalf("anonymous pull: %v, want ErrAuth", err)
	}
}

type staticKeychain struct{ cfg authn.AuthConfig }

func (k staticKeychain) Resolve(authn.Resource) (authn.Authenticator, error) {
	return authn.FromConfig(k.cfg), nil
}

func TestPushRefusesWhatPullWould(t *testing.T) {
	c := New(Options{Keychain: anonymous, MaxLayer: 10})
	r := ref(t, "oci://127.0.0.1:1/tools/echo:v1") // never dialled
	if _, err := c.Push(t.Context(), r, []byte("not wasm")); !errors.Is(err, ErrNotWasm) {
		t.Errorf("push of text: %v", err)
	}
	if _, err := c.Push(t.Context(), r, module("longer than ten")); !errors.Is(err, ErrTooLarge) {
		t.Errorf("push over the cap: %v", err)
	}
}

func TestPlainHTTPOnlyToLoopbackOrListed(t *testing.T) {
	var reached []string
	next := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		reached = append(reached, r.URL.Host)
		return &http.Response{StatusCode: 200, Body: io.NopCloser(strings.NewReader(""))}, nil
	})
	g := httpGuard{next: next, insecure: []string{"lan.example:5000"}}
	for _, tc := range []struct {
		url string
		ok  bool
	}{
		{"http://127.0.0.1:5000/v2/", true},
		{"http://localhost:5000/v2/", true},
		{"http://[::1]:5000/v2/", true},
		{"http://lan.example:5000/v2/", true},
		{"https://registry.example/v2/", true},
		{"http://registry.example/v2/", false},
		{"http://10.0.0.5:5000/v2/", false},
		{"http://printer.local:5000/v2/", false},
		{"http://lan.example:5001/v2/", false},
	} {
		req, _ := http.NewRequest(http.MethodGet, tc.url, nil)
		_, err := g.RoundTrip(req)
		if tc.ok != (err == nil) || (err != nil && !errors.Is(err, ErrInsecure)) {
			t.Errorf("%s: %v", tc.url, err)
		}
	}
	if len(reached) != 5 {
		t.Errorf("reached %v", reached)
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func TestParseReference(t *testing.T) {
	for _, tc := range []struct{ in, out, digest string }{
		{"oci://ghcr.io/acme/echo:v1", "oci://ghcr.io/acme/echo:v1", ""},
		{"oci://ghcr.io/acme/echo", "oci://ghcr.io/acme/echo:latest", ""},
		{"oci://localhost:5000/echo@sha256:" + strings.Repeat("a", 64), "oci://localhost:5000/echo@sha256:" + strings.Repeat("a", 64), "sha256:" + strings.Repeat("a", 64)},
	} {
		r, err := ParseReference(tc.in, nil)
		if err != nil || r.String() != tc.out || r.Digest() != tc.digest {
			t.Errorf("%s: %v %q %q", tc.in, err, r.String(), r.Digest())
		}
	}
	for _, bad := range []string{"ghcr.io/acme/echo:v1", "https://ghcr.io/acme/echo", "oci://echo", "oci://ghcr.io/acme/echo@sha256:zz", "oci://ghcr.io/Acme/echo"} {
		if _, err := ParseReference(bad, nil); !errors.Is(err, ErrReference) {
			t.Errorf("%s: %v, want ErrReference", bad, err)
		}
	}
}
