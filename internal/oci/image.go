package oci

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"io"
	"path"
	"strings"
)

// Container images: hyper-mcp publishes its plugins as images built FROM
// scratch with the module copied in (`COPY plugin.wasm /plugin.wasm`), not
// as the CNCF Wasm artifact. Pull takes the module out of such an image's
// layers as hyper-mcp's loader does: /plugin.wasm, else a file named
// plugin.wasm nearest the root, else the .wasm file nearest the root,
// looking through the layers from the last (the one that wrote it last).
const (
	ociImageConfig     = "application/vnd.oci.image.config.v1+json"
	dockerImageConfig  = "application/vnd.docker.container.image.v1+json"
	ociLayerTar        = "application/vnd.oci.image.layer.v1.tar"
	ociLayerTarGzip    = "application/vnd.oci.image.layer.v1.tar+gzip"
	dockerLayerTarGzip = "application/vnd.docker.image.rootfs.diff.tar.gzip"
	// maxImageLayers bounds the layers searched: a plugin image has one.
	maxImageLayers = 16
)

// isImage reports whether m is a container image (its config is an image
// config) rather than a Wasm artifact.
func isImage(m manifest) bool {
	return m.Config.MediaType == ociImageConfig || m.Config.MediaType == dockerImageConfig
}

// imageLayers checks an image's layers and returns them.
func imageLayers(s string, m manifest) ([]descriptor, error) {
	if len(m.Layers) == 0 || len(m.Layers) > maxImageLayers {
		return nil, fail(s, ErrNotWasm, "an image of %d layers: want 1 to %d, one of them holding the module", len(m.Layers), maxImageLayers)
	}
	for _, l := range m.Layers {
		switch l.MediaType {
		case ociLayerTar, ociLayerTarGzip, dockerLayerTarGzip:
		default:
			return nil, fail(s, ErrNotWasm, "image layer media type %q is not a tar layer", l.MediaType)
		}
		if !validDigest(l.Digest) || l.Size < 0 {
			return nil, fail(s, ErrNotWasm, "image layer %q of size %d", l.Digest, l.Size)
		}
	}
	return m.Layers, nil
}

// errNoModule is a layer without a module file.
var errNoModule = errors.New("no .wasm file in the layer")

// moduleInLayer returns the module file in a tar layer (gzip-compressed
// when its media type says so), reading at most max bytes of the tar
// stream (a gzip bomb is cut there and refused).
func moduleInLayer(l descriptor, b []byte, max int64) ([]byte, error) {
	var r io.Reader = bytes.NewReader(b)
	if l.MediaType != ociLayerTar {
		zr, err := gzip.NewReader(r)
		if err != nil {
			return nil, err
		}
		defer zr.Close()
		r = zr
	}
	lr := &io.LimitedReader{R: r, N: max + 1}
	tr := tar.NewReader(lr)
	var best []byte
	bestRank, bestDepth := 3, 0
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			if lr.N <= 0 {
				return nil, errTooLarge
			}
			return nil, err
		}
		rank, depth, ok := candidate(h)
		if !ok || rank > bestRank || (rank == bestRank && depth >= bestDepth && best != nil) {
			continue
		}
		body, err := io.ReadAll(tr)
		if err != nil {
			if lr.N <= 0 {
				return nil, errTooLarge
			}
			return nil, err
		}
		if CheckModule(body) != nil {
			continue // named .wasm but not a core module: not the plugin
		}
		best, bestRank, bestDepth = body, rank, depth
	}
	if lr.N <= 0 {
		return nil, errTooLarge
	}
	if best == nil {
		return nil, errNoModule
	}
	return best, nil
}

var errTooLarge = errors.New("the layer unpacks to more than the module cap")

// candidate ranks a tar entry as the module: 0 for /plugin.wasm, 1 for a
// plugin.wasm elsewhere, 2 for any other .wasm; depth is how many folders
// down it is. ok is false for anything that is not a regular .wasm file.
func candidate(h *tar.Header) (rank, depth int, ok bool) {
	if h.Typeflag != tar.TypeReg {
		return 0, 0, false
	}
	p := strings.TrimPrefix(path.Clean("/"+h.Name), "/")
	switch {
	case p == "plugin.wasm":
		return 0, 0, true
	case path.Base(p) == "plugin.wasm":
		rank = 1
	case strings.HasSuffix(p, ".wasm"):
		rank = 2
	default:
		return 0, 0, false
	}
	return rank, strings.Count(p, "/"), true
}

// platformManifest picks from an index the manifest a pull takes: the one
// for wasip1/wasm, else linux/amd64 (what hyper-mcp's loader resolves),
// else the only one that is not an attestation. ok is false when none
// fits.
func platformManifest(raw []byte) (descriptor, bool) {
	var idx struct {
		Manifests []struct {
			descriptor
			Platform *struct {
				OS           string `json:"os"`
				Architecture string `json:"architecture"`
			} `json:"platform"`
			Annotations map[string]string `json:"annotations"`
		} `json:"manifests"`
	}
	if json.Unmarshal(raw, &idx) != nil {
		return descriptor{}, false
	}
	var others []descriptor
	for _, want := range [][2]string{{"wasip1", "wasm"}, {"wasi", "wasm"}, {"linux", "amd64"}} {
		for _, m := range idx.Manifests {
			if p := m.Platform; p != nil && p.OS == want[0] && p.Architecture == want[1] {
				return m.descriptor, true
			}
		}
	}
	for _, m := range idx.Manifests {
		if m.Annotations["vnd.docker.reference.type"] != "attestation-manifest" && (m.Platform == nil || m.Platform.OS != "unknown") {
			others = append(others, m.descriptor)
		}
	}
	if len(others) == 1 {
		return others[0], true
	}
	return descriptor{}, false
}

// platformImage follows an index to the one manifest a pull takes
// (platformManifest), fetched by its digest.
func (c *Client) platformImage(f fetcher, raw []byte) (manifest, error) {
	d, ok := platformManifest(raw)
	if !ok || !validDigest(d.Digest) {
		return manifest{}, fail(f.s, ErrNotWasm, "an index with no wasip1/wasm or linux/amd64 manifest (or more than one other): not one module artifact")
	}
	sub, mt, _, err := f.manifest(d.Digest, d.Digest, c.opts.maxManifest())
	if err != nil {
		return manifest{}, c.wrap(f.ctx, f.s, err)
	}
	m, index, err := decodeManifest(f.s, sub, mt)
	if err == nil && index {
		err = fail(f.s, ErrNotWasm, "an index within an index")
	}
	return m, err
}

// moduleOfImage takes the module out of an image's layers, the last
// layer first (see image.go).
func (c *Client) moduleOfImage(f fetcher, m manifest) ([]byte, error) {
	layers, err := imageLayers(f.s, m)
	if err != nil {
		return nil, err
	}
	for i := len(layers) - 1; i >= 0; i-- {
		b, err := c.layerBlob(f, layers[i])
		if err != nil {
			return nil, err
		}
		module, err := moduleInLayer(layers[i], b, c.opts.maxLayer())
		switch {
		case err == nil:
			return module, nil
		case errors.Is(err, errTooLarge):
			return nil, fail(f.s, ErrTooLarge, "image layer %s unpacks to more than the cap of %d bytes", layers[i].Digest, c.opts.maxLayer())
		case !errors.Is(err, errNoModule):
			return nil, &Error{Ref: f.s, Kind: ErrNotWasm, Detail: "image layer " + layers[i].Digest + " is not a readable tar", Err: err}
		}
	}
	return nil, fail(f.s, ErrNotWasm, "an image with no WebAssembly module (a .wasm file) in its layers (hyper-mcp's plugins carry /plugin.wasm)")
}
