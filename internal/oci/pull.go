package oci

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"
)

// Manifest media types a pull asks for. An index is accepted on the wire
// only to say clearly that it is not a module artifact.
const (
	ociManifest    = "application/vnd.oci.image.manifest.v1+json"
	dockerManifest = "application/vnd.docker.distribution.manifest.v2+json"
	ociIndex       = "application/vnd.oci.image.index.v1+json"
	dockerList     = "application/vnd.docker.distribution.manifest.list.v2+json"
)

// Artifact is a pulled module.
type Artifact struct {
	// Ref is the reference pinned to Digest.
	Ref Reference
	// Digest is the manifest's digest (sha256:HEX): what a lock pins.
	Digest string
	// LayerDigest is the module's digest (sha256:HEX), the sha256 of
	// Module.
	LayerDigest string
	// Module is the module's bytes: checked against LayerDigest, and
	// beginning with the WebAssembly core module header.
	Module []byte
}

type descriptor struct {
	MediaType string `json:"mediaType"`
	Digest    string `json:"digest"`
	Size      int64  `json:"size"`
}

type manifest struct {
	SchemaVersion int          `json:"schemaVersion"`
	MediaType     string       `json:"mediaType"`
	Config        descriptor   `json:"config"`
	Layers        []descriptor `json:"layers"`
}

// Pull fetches the module ref names and verifies it: the manifest against
// the digest a pinned reference gives (and against the registry's
// Docker-Content-Digest), its layout, the layer's size and digest, and the
// module header. Nothing is written anywhere.
func (c *Client) Pull(ctx context.Context, ref Reference) (*Artifact, error) {
	ctx, cancel := context.WithTimeout(ctx, c.opts.timeout())
	defer cancel()
	s := ref.String()
	rt, err := c.transport(ctx, ref, transport.PullScope)
	if err != nil {
		return nil, c.wrap(ctx, s, err)
	}
	f := fetcher{ctx: ctx, rt: rt, ref: ref, s: s}

	raw, mt, digest, err := f.manifest(c.opts.maxManifest())
	if err != nil {
		return nil, c.wrap(ctx, s, err)
	}
	layer, err := checkLayout(s, raw, mt)
	if err != nil {
		return nil, err
	}
	if layer.Size > c.opts.maxLayer() {
		return nil, fail(s, ErrTooLarge, "the module layer is %d bytes, over the cap of %d", layer.Size, c.opts.maxLayer())
	}
	module, err := f.blob(layer)
	if err != nil {
		return nil, c.wrap(ctx, s, err)
	}
	if err := CheckModule(module); err != nil {
		return nil, &Error{Ref: s, Kind: ErrNotWasm, Err: err}
	}
	pinned, err := ref.AtDigest(digest)
	if err != nil {
		return nil, err
	}
	return &Artifact{Ref: pinned, Digest: digest, LayerDigest: layer.Digest, Module: module}, nil
}

// checkLayout checks that a manifest is the CNCF Wasm layout and returns
// its module layer.
func checkLayout(s string, raw []byte, contentType string) (descriptor, error) {
	var m manifest
	if err := json.Unmarshal(raw, &m); err != nil {
		return descriptor{}, &Error{Ref: s, Kind: ErrNotWasm, Detail: "the manifest is not JSON", Err: err}
	}
	mt := m.MediaType
	if mt == "" {
		mt, _, _ = strings.Cut(contentType, ";")
	}
	switch mt {
	case ociManifest, dockerManifest:
	case ociIndex, dockerList:
		return descriptor{}, fail(s, ErrNotWasm, "an index of several manifests (%s), not one module artifact", mt)
	default:
		return descriptor{}, fail(s, ErrNotWasm, "manifest media type %q is not an image manifest", mt)
	}
	if m.Config.MediaType != ConfigMediaType {
		return descriptor{}, fail(s, ErrNotWasm, "config media type %q, want %s", m.Config.MediaType, ConfigMediaType)
	}
	if len(m.Layers) != 1 {
		return descriptor{}, fail(s, ErrNotWasm, "%d layers, want exactly one %s layer", len(m.Layers), LayerMediaType)
	}
	l := m.Layers[0]
	if l.MediaType != LayerMediaType && l.MediaType != legacyLayerMediaType {
		return descriptor{}, fail(s, ErrNotWasm, "layer media type %q, want %s", l.MediaType, LayerMediaType)
	}
	if !validDigest(l.Digest) {
		return descriptor{}, fail(s, ErrNotWasm, "layer digest %q is not sha256:<64 hex digits>", l.Digest)
	}
	if l.Size < 0 {
		return descriptor{}, fail(s, ErrNotWasm, "layer size %d", l.Size)
	}
	return l, nil
}

// CheckModule reports whether b starts with the header of a WebAssembly
// core module (version 1). A component (the component model's header) is
// refused by name: toolhost runs core modules.
func CheckModule(b []byte) error {
	if len(b) < 8 || string(b[:4]) != "\x00asm" {
		return errors.New("the layer is not a WebAssembly module (no \\0asm header)")
	}
	if b[4] == 0x0d && b[6] == 0x01 {
		return errors.New("the layer is a WebAssembly component; toolhost runs core modules")
	}
	if !bytes.Equal(b[4:8], []byte{1, 0, 0, 0}) {
		return fmt.Errorf("WebAssembly binary version %x, want 01000000", b[4:8])
	}
	return nil
}

func validDigest(d string) bool {
	h, ok := strings.CutPrefix(d, "sha256:")
	if !ok || len(h) != 64 || strings.ToLower(h) != h {
		return false
	}
	_, err := hex.DecodeString(h)
	return err == nil
}

func sha256Digest(b []byte) string {
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// transport is go-containerregistry's authenticated transport for ref's
// repository, over the plain-HTTP guard.
func (c *Client) transport(ctx context.Context, ref Reference, scope string) (http.RoundTripper, error) {
	repo := ref.ref.Context()
	auth, err := authn.Resolve(ctx, c.opts.keychain(), repo)
	if err != nil {
		return nil, fmt.Errorf("reading credentials: %w", err)
	}
	return transport.NewWithContext(ctx, repo.Registry, auth, c.guard(), []string{repo.Scope(scope)})
}

func (c *Client) guard() http.RoundTripper {
	base := c.opts.Transport
	if base == nil {
		base = http.DefaultTransport
	}
	return httpGuard{next: base, insecure: c.opts.Insecure}
}

// fetcher reads one repository's manifests and blobs.
type fetcher struct {
	ctx context.Context
	rt  http.RoundTripper
	ref Reference
	s   string
}

func (f fetcher) url(kind, id string) string {
	repo := f.ref.ref.Context()
	return fmt.Sprintf("%s://%s/v2/%s/%s/%s", repo.Registry.Scheme(), repo.RegistryStr(), repo.RepositoryStr(), kind, id)
}

func (f fetcher) get(url, accept string) (*http.Response, error) {
	return f.do(http.MethodGet, url, accept, nil, http.StatusOK)
}

// do sends one request (a GET's header is Accept, a PUT's Content-Type)
// and checks its status against ok.
func (f fetcher) do(method, url, header string, body []byte, ok ...int) (*http.Response, error) {
	var r io.Reader
	if body != nil {
		r = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(f.ctx, method, url, r)
	if err != nil {
		return nil, err
	}
	if header != "" {
		if body != nil {
			req.Header.Set("Content-Type", header)
		} else {
			req.Header.Set("Accept", header)
		}
	}
	resp, err := (&http.Client{Transport: f.rt}).Do(req)
	if err != nil {
		return nil, err
	}
	if err := transport.CheckError(resp, ok...); err != nil {
		resp.Body.Close()
		return nil, err
	}
	return resp, nil
}

// readCapped reads at most max bytes of r, and fails with ErrTooLarge
// past them.
func (f fetcher) readCapped(r io.Reader, max int64, what string) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > max {
		return nil, fail(f.s, ErrTooLarge, "the %s is over the cap of %d bytes", what, max)
	}
	return b, nil
}

// manifest returns the manifest's bytes, its Content-Type and its digest,
// checked against a pinned reference and the registry's header.
func (f fetcher) manifest(max int64) (raw []byte, contentType, digest string, err error) {
	id := f.ref.ref.Identifier()
	resp, err := f.get(f.url("manifests", id), strings.Join([]string{ociManifest, dockerManifest, ociIndex, dockerList}, ", "))
	if err != nil {
		return nil, "", "", err
	}
	defer resp.Body.Close()
	if resp.ContentLength > max {
		return nil, "", "", fail(f.s, ErrTooLarge, "the manifest is %d bytes, over the cap of %d", resp.ContentLength, max)
	}
	raw, err = f.readCapped(resp.Body, max, "manifest")
	if err != nil {
		return nil, "", "", err
	}
	digest = sha256Digest(raw)
	if want := f.ref.Digest(); want != "" && want != digest {
		return nil, "", "", fail(f.s, ErrDigestMismatch, "the manifest's bytes hash to %s", digest)
	}
	if got := resp.Header.Get("Docker-Content-Digest"); strings.HasPrefix(got, "sha256:") && got != digest {
		return nil, "", "", fail(f.s, ErrDigestMismatch, "the registry says the manifest is %s, its bytes hash to %s", got, digest)
	}
	return raw, resp.Header.Get("Content-Type"), digest, nil
}

// blob returns the bytes of d, checked against its size and digest.
func (f fetcher) blob(d descriptor) ([]byte, error) {
	resp, err := f.get(f.url("blobs", d.Digest), "")
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := f.readCapped(resp.Body, d.Size, "module layer (the size its manifest gives)")
	if err != nil {
		return nil, err
	}
	if int64(len(b)) != d.Size {
		return nil, fail(f.s, ErrDigestMismatch, "the layer has %d bytes, its manifest says %d", len(b), d.Size)
	}
	if got := sha256Digest(b); got != d.Digest {
		return nil, fail(f.s, ErrDigestMismatch, "the layer's bytes hash to %s, its manifest says %s", got, d.Digest)
	}
	return b, nil
}

// wrap turns a transport failure into an *Error of the right kind.
func (c *Client) wrap(ctx context.Context, s string, err error) error {
	var e *Error
	if errors.As(err, &e) {
		if e.Ref != s && e.Kind == ErrInsecure {
			e.Detail = e.Ref + " is " + e.Detail + " (--insecure-registry)"
			e.Ref = s
		}
		return e
	}
	if ctx.Err() == context.DeadlineExceeded {
		return &Error{Ref: s, Detail: fmt.Sprintf("timed out after %s", c.opts.timeout()), Err: err}
	}
	var te *transport.Error
	if errors.As(err, &te) {
		switch {
		case te.StatusCode == http.StatusUnauthorized || te.StatusCode == http.StatusForbidden:
			return &Error{Ref: s, Kind: ErrAuth, Err: err}
		case te.StatusCode == http.StatusNotFound || hasCode(te, "MANIFEST_UNKNOWN", "NAME_UNKNOWN", "BLOB_UNKNOWN"):
			return &Error{Ref: s, Kind: ErrNotFound, Err: err}
		}
	}
	return &Error{Ref: s, Err: err}
}

func hasCode(te *transport.Error, codes ...string) bool {
	for _, d := range te.Errors {
		for _, c := range codes {
			if string(d.Code) == c {
				return true
			}
		}
	}
	return false
}
