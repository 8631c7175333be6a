package oci

import (
	"context"
	"encoding/json"

	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/static"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// wasmConfig is the config blob of the CNCF Wasm layout (v0). It carries
// no creation time, so that pushing the same module twice gives the same
// manifest digest.
type wasmConfig struct {
	Architecture string   `json:"architecture"`
	OS           string   `json:"os"`
	LayerDigests []string `json:"layerDigests"`
}

// rawManifest is a manifest go-containerregistry puts as it is.
type rawManifest []byte

func (m rawManifest) RawManifest() ([]byte, error)        { return m, nil }
func (m rawManifest) MediaType() (types.MediaType, error) { return ociManifest, nil }

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

// putArtifact uploads the two blobs, then the manifest that names them.
func (c *Client) putArtifact(ctx context.Context, ref Reference, config, module, m []byte) error {
	opts := []remote.Option{
		remote.WithContext(ctx),
		remote.WithAuthFromKeychain(c.opts.keychain()),
		remote.WithTransport(c.guard()),
	}
	repo := ref.ref.Context()
	for _, blob := range []struct {
		b  []byte
		mt types.MediaType
	}{{config, ConfigMediaType}, {module, LayerMediaType}} {
		if err := remote.WriteLayer(repo, static.NewLayer(blob.b, blob.mt), opts...); err != nil {
			return err
		}
	}
	return remote.Put(ref.ref, rawManifest(m), opts...)
}
