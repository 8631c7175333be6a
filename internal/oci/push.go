package oci

import (
	"context"
	"encoding/json"

	"fmt"
	"net/http"

	"github.com/google/go-containerregistry/pkg/v1/remote/transport"
)

// wasmConfig is the config blob of the CNCF Wasm layout (v0). It carries
// no creation time, so that pushing the same module twice gives the same
// manifest digest.
type wasmConfig struct {
	Architecture string   `json:"architecture"`
	OS           string   `json:"os"`
	LayerDigests []string `json:"layerDigests"`
}

// Artifact builds the CNCF Wasm artifact of module: the config blob and
// the manifest. The same module always gives the same bytes.
func artifact(module []byte) (config, manifestBytes []byte, err error) {
	layer := descriptor{MediaType: LayerMediaType, Digest: sha256Digest(module), Size: int64(len(module))}
	config, err = json.Marshal(wasmConfig{Architecture: "wasm", OS: "wasip1", LayerDigests: []string{layer.Digest}})
	if err != nil {
		return nil, nil, err
	}
	m := manifest{
		SchemaVersion: 2,
		MediaType:     ociManifest,
		Config:        descriptor{MediaType: ConfigMediaType, Digest: sha256Digest(config), Size: int64(len(config))},
		Layers:        []descriptor{layer},
	}
	manifestBytes, err = json.Marshal(m)
	return config, manifestBytes, err
}

// Push publishes module at ref in the CNCF Wasm layout and returns the
// reference pinned to the manifest's digest. The module is checked first
// (CheckModule), so nothing that a pull would refuse is published.
func (c *Client) Push(ctx context.Context, ref Reference, module []byte) (Reference, error) {
	ctx, cancel := context.WithTimeout(ctx, c.opts.timeout())
	defer cancel()
	s := ref.String()
	if err := CheckModule(module); err != nil {
		return Reference{}, &Error{Ref: s, Kind: ErrNotWasm, Err: err}
	}
	if int64(len(module)) > c.opts.maxLayer() {
		return Reference{}, fail(s, ErrTooLarge, "the module is %d bytes, over the cap of %d", len(module), c.opts.maxLayer())
	}
	config, m, err := artifact(module)
	if err != nil {
		return Reference{}, &Error{Ref: s, Err: err}
	}
	if err := c.putArtifact(ctx, ref, config, module, m); err != nil {
		return Reference{}, c.wrap(ctx, s, err)
	}
	return ref.AtDigest(sha256Digest(m))
}

// putArtifact uploads the two blobs, then the manifest that names them,
// with the distribution API's two-step upload (POST, then PUT with the
// digest): what every registry accepts. A blob the registry has is not
// sent again.
func (c *Client) putArtifact(ctx context.Context, ref Reference, config, module, m []byte) error {
	rt, err := c.transport(ctx, ref, transport.PushScope)
	if err != nil {
		return err
	}
	f := fetcher{ctx: ctx, rt: rt, ref: ref, s: ref.String()}
	for _, b := range [][]byte{config, module} {
		if err := f.putBlob(b); err != nil {
			return err
		}
	}
	resp, err := f.do(http.MethodPut, f.url("manifests", ref.ref.Identifier()), ociManifest, m, http.StatusCreated, http.StatusOK)
	if err != nil {
		return err
	}
	resp.Body.Close()
	return nil
}

func (f fetcher) putBlob(b []byte) error {
	digest := sha256Digest(b)
	if resp, err := f.do(http.MethodHead, f.url("blobs", digest), "", nil, http.StatusOK); err == nil {
		resp.Body.Close()
		return nil
	}
	resp, err := f.do(http.MethodPost, f.url("blobs", "uploads/"), "", nil, http.StatusAccepted)
	if err != nil {
		return err
	}
	resp.Body.Close()
	loc, err := resp.Location()
	if err != nil {
		return fmt.Errorf("the registry's upload answer has no usable Location: %w", err)
	}
	q := loc.Query()
	q.Set("digest", digest)
	loc.RawQuery = q.Encode()
	resp, err = f.do(http.MethodPut, loc.String(), "application/octet-stream", b, http.StatusCreated)
	if err != nil {
		return err
	}
	resp.Body.Close()
	return nil
}
