// Package oci publishes and fetches tool modules in the CNCF Wasm OCI
// artifact layout: an OCI image manifest whose config has the media type
// application/vnd.wasm.config.v0+json and whose one layer, of media type
// application/wasm, is the module's bytes.
//
// A Client talks to registries with github.com/google/go-containerregistry
// (authentication, the token dance, pushes). Pulls read the manifest and
// the layer themselves, through that library's authenticated transport, so
// that every byte is counted against a cap and checked against its digest
// here, with the failure typed (see Error).
//
// Plain HTTP is used only for a loopback registry (localhost, 127.0.0.0/8,
// ::1) or one listed in Options.Insecure; every other request goes over
// HTTPS with the system roots (SSL_CERT_FILE is honoured).
package oci

import (
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
)

// The media types of the CNCF Wasm OCI artifact layout.
const (
	// ConfigMediaType is the config blob's media type.
	ConfigMediaType = "application/vnd.wasm.config.v0+json"
	// LayerMediaType is the module layer's media type.
	LayerMediaType = "application/wasm"
	// legacyLayerMediaType is what wasm-to-oci and early Wassette pushes
	// used for the layer; accepted on pull, never written.
	legacyLayerMediaType = "application/vnd.wasm.content.layer.v1+wasm"
)

// Defaults of Options' zero fields.
const (
	// DefaultMaxManifest caps a manifest's bytes (an artifact's is under
	// 1 KiB; images with many layers stay far below this).
	DefaultMaxManifest = 1 << 20
	// DefaultMaxLayer caps the module layer (the largest Go tool here is
	// about 12 MiB).
	DefaultMaxLayer = 128 << 20
	// DefaultTimeout bounds one Push or Pull as a whole.
	DefaultTimeout = 5 * time.Minute
)

// Options configures a Client. The zero value is usable: anonymous or
// Docker-config credentials, the default caps and timeout, the system's
// HTTPS transport.
type Options struct {
	// MaxManifest caps a manifest, in bytes; 0 means DefaultMaxManifest.
	MaxManifest int64
	// MaxLayer caps the module layer (and the config blob), in bytes; 0
	// means DefaultMaxLayer.
	MaxLayer int64
	// Timeout bounds one Push or Pull; 0 means DefaultTimeout.
	Timeout time.Duration
	// Insecure lists registries (host or host:port, as written in a
	// reference) that may be reached over plain HTTP. Loopback registries
	// may always be.
	Insecure []string
	// Keychain finds credentials; nil means authn.DefaultKeychain (the
	// Docker config file, $DOCKER_CONFIG/config.json).
	Keychain authn.Keychain
	// Transport is the HTTP transport under authentication; nil means
	// http.DefaultTransport. Tests set it to reach an httptest server.
	Transport http.RoundTripper
}

func (o Options) maxManifest() int64 {
	if o.MaxManifest > 0 {
		return o.MaxManifest
	}
	return DefaultMaxManifest
}

func (o Options) maxLayer() int64 {
	if o.MaxLayer > 0 {
		return o.MaxLayer
	}
	return DefaultMaxLayer
}

func (o Options) timeout() time.Duration {
	if o.Timeout > 0 {
		return o.Timeout
	}
	return DefaultTimeout
}

func (o Options) keychain() authn.Keychain {
	if o.Keychain != nil {
		return o.Keychain
	}
	return authn.DefaultKeychain
}

// Client pushes and pulls tool modules. It holds no connection state of its
// own and is safe for concurrent use.
type Client struct {
	opts Options
}

// New returns a Client with opts.
func New(opts Options) *Client { return &Client{opts: opts} }

// The kinds of failure, for errors.Is. Every error Push and Pull return
// for a registry's answer is an *Error wrapping one of these.
var (
	// ErrNotFound: the repository, tag or digest does not exist.
	ErrNotFound = errors.New("not found")
	// ErrAuth: the registry refused the credentials (or asked for some).
	ErrAuth = errors.New("authentication refused")
	// ErrDigestMismatch: bytes did not hash to the digest that names them.
	ErrDigestMismatch = errors.New("digest mismatch")
	// ErrTooLarge: a manifest or blob is larger than its cap.
	ErrTooLarge = errors.New("too large")
	// ErrNotWasm: the artifact is not a Wasm module in the CNCF layout.
	ErrNotWasm = errors.New("not a wasm artifact")
	// ErrInsecure: plain HTTP to a registry that is neither loopback nor
	// listed as insecure.
	ErrInsecure = errors.New("plain HTTP refused")
	// ErrReference: the reference does not parse.
	ErrReference = errors.New("bad reference")
)

// Error is a failed push or pull: which reference, which kind of failure
// (one of the Err variables, for errors.Is), and the detail.
type Error struct {
	// Ref is the reference as the caller gave it.
	Ref string
	// Kind is one of the Err variables, or nil for a transport failure.
	Kind error
	// Detail says what exactly happened.
	Detail string
	// Err is the underlying error, if any.
	Err error
}

func (e *Error) Error() string {
	msg := e.Ref + ": "
	if e.Kind != nil {
		msg += e.Kind.Error()
		if e.Detail != "" {
			msg += ": "
		}
	}
	msg += e.Detail
	if e.Err != nil {
		if e.Detail != "" || e.Kind != nil {
			msg += ": "
		}
		msg += e.Err.Error()
	}
	return msg
}

// Is reports whether target is e's kind.
func (e *Error) Is(target error) bool { return e.Kind != nil && target == e.Kind }

// Unwrap returns the underlying error.
func (e *Error) Unwrap() error { return e.Err }

func fail(ref string, kind error, format string, args ...any) *Error {
	return &Error{Ref: ref, Kind: kind, Detail: fmt.Sprintf(format, args...)}
}
