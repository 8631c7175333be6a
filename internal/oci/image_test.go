package oci

import (
	"archive/tar"
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// tarLayer is a layer holding files (name -> bytes), as `COPY` writes one.
func tarLayer(t *testing.T, files ...[2]string) v1.Layer {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, f := range files {
		if err := tw.WriteHeader(&tar.Header{Name: f[0], Mode: 0o644, Size: int64(len(f[1])), Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		tw.Write([]byte(f[1]))
	}
	tw.Close()
	b := buf.Bytes()
	l, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(b)), nil })
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// pushImage writes an image of the layers (on scratch, OCI or Docker
// media types) to host/repo:tag, wrapped in an index for linux/amd64 and
// an attestation when indexed is set, as docker buildx publishes one.
func pushImage(t *testing.T, host, repoTag string, docker, indexed bool, layers ...v1.Layer) {
	t.Helper()
	img, err := mutate.AppendLayers(empty.Image, layers...)
	if err != nil {
		t.Fatal(err)
	}
	if !docker {
		img = mutate.MediaType(img, types.OCIManifestSchema1)
		img = mutate.ConfigMediaType(img, types.OCIConfigJSON)
	}
	r, err := name.ParseReference(host+"/"+repoTag, name.Insecure)
	if err != nil {
		t.Fatal(err)
	}
	if !indexed {
		if err := remote.Write(r, img); err != nil {
			t.Fatal(err)
		}
		return
	}
	att, _ := mutate.AppendLayers(empty.Image, tarLayer(t, [2]string{"provenance.json", "{}"}))
	idx := mutate.AppendManifests(mutate.IndexMediaType(empty.Index, types.OCIImageIndex),
		mutate.IndexAddendum{Add: img, Descriptor: v1.Descriptor{Platform: &v1.Platform{OS: "linux", Architecture: "amd64"}}},
		mutate.IndexAddendum{Add: att, Descriptor: v1.Descriptor{Platform: &v1.Platform{OS: "unknown", Architecture: "unknown"},
			Annotations: map[string]string{"vnd.docker.reference.type": "attestation-manifest"}}})
	if err := remote.WriteIndex(r, idx); err != nil {
		t.Fatal(err)
	}
}

// hyper-mcp's plugin images — the module at /plugin.wasm of a scratch
// image's layer, OCI or Docker media types, alone or in a buildx index —
// pull as the module; the lock's module digest is the file's.
func TestPullPluginImage(t *testing.T) {
	host := serve(t, nil)
	c := New(Options{Keychain: anonymous})
	mod := module("plugin")
	for _, tc := range []struct {
		name            string
		docker, indexed bool
		layers          []v1.Layer
	}{
		{"oci", false, false, []v1.Layer{tarLayer(t, [2]string{"plugin.wasm", string(mod)})}},
		{"docker-buildx-index", true, true, []v1.Layer{tarLayer(t, [2]string{"/plugin.wasm", string(mod)})}},
		// The ranking: /plugin.wasm beats a deeper plugin.wasm and any
		// other .wasm; a later layer is searched first.
		{"ranked", false, false, []v1.Layer{
			tarLayer(t, [2]string{"old/plugin.wasm", string(module("old"))}),
			tarLayer(t, [2]string{"lib/other.wasm", string(module("other"))}, [2]string{"app/plugin.wasm", string(module("deep"))},
				[2]string{"plugin.wasm", string(mod)}, [2]string{"notes.txt", "x"}),
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pushImage(t, host, "acme/"+tc.name+":v1", tc.docker, tc.indexed, tc.layers...)
			a, err := c.Pull(t.Context(), ref(t, "oci://"+host+"/acme/"+tc.name+":v1"))
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(a.Module, mod) || a.LayerDigest != sha256Digest(mod) || !strings.HasPrefix(a.Ref.String(), "oci://"+host+"/acme/"+tc.name+"@sha256:") {
				t.Fatalf("pulled %d bytes, module digest %s, ref %s", len(a.Module), a.LayerDigest, a.Ref)
			}
			again, err := c.Pull(t.Context(), a.Ref) // by the pinned digest, as a re-pull does
			if err != nil || !bytes.Equal(again.Module, mod) {
				t.Fatalf("pull by digest: %v", err)
			}
		})
	}

	for _, tc := range []struct {
		name   string
		layers []v1.Layer
		want   string
	}{
		{"no-wasm", []v1.Layer{tarLayer(t, [2]string{"README", "hi"})}, "no WebAssembly module"},
		{"not-a-module", []v1.Layer{tarLayer(t, [2]string{"plugin.wasm", "not wasm at all"})}, "no WebAssembly module"},
	} {
		pushImage(t, host, "acme/"+tc.name+":v1", false, false, tc.layers...)
		_, err := c.Pull(t.Context(), ref(t, "oci://"+host+"/acme/"+tc.name+":v1"))
		if !errors.Is(err, ErrNotWasm) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want ErrNotWasm saying %q", tc.name, err, tc.want)
		}
	}

	// A layer that unpacks past the module cap is refused, not read whole.
	big := New(Options{Keychain: anonymous, MaxLayer: 64 << 10})
	pushImage(t, host, "acme/bomb:v1", false, false, tarLayer(t, [2]string{"plugin.wasm", string(mod) + strings.Repeat("\x00", 1<<20)}))
	if _, err := big.Pull(t.Context(), ref(t, "oci://"+host+"/acme/bomb:v1")); !errors.Is(err, ErrTooLarge) {
		t.Errorf("a layer unpacking past the cap: %v, want ErrTooLarge", err)
	}
}
