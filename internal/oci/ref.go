package oci

import (
	"net"
	"net/http"
	"slices"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
)

// Scheme is the prefix of a reference on toolhost's command line.
const Scheme = "oci://"

// Reference is a parsed oci:// reference.
type Reference struct {
	ref      name.Reference
	insecure bool // listed in Options.Insecure
}

// ParseReference parses oci://REGISTRY/REPO[:TAG|@sha256:DIGEST]. A
// reference without a tag or digest means the tag "latest". insecure is
// Options.Insecure: a registry listed there is reached over plain HTTP.
func ParseReference(s string, insecure []string) (Reference, error) {
	rest, ok := strings.CutPrefix(s, Scheme)
	if !ok {
		return Reference{}, fail(s, ErrReference, "must start with %s (oci://REGISTRY/REPO[:TAG|@sha256:DIGEST])", Scheme)
	}
	if !strings.Contains(rest, "/") {
		return Reference{}, fail(s, ErrReference, "needs a registry and a repository (oci://REGISTRY/REPO)")
	}
	reg, _, _ := strings.Cut(rest, "/")
	r := Reference{insecure: slices.Contains(insecure, reg)}
	var err error
	if r.ref, err = name.ParseReference(rest, r.nameOpts()...); err != nil {
		return Reference{}, &Error{Ref: s, Kind: ErrReference, Err: err}
	}
	return r, nil
}

// String is the reference with its scheme, as ParseReference reads it.
func (r Reference) String() string { return Scheme + r.ref.Name() }

// Repository is the reference without its tag or digest, with its scheme.
func (r Reference) Repository() string { return Scheme + r.ref.Context().Name() }

// Digest is the manifest digest the reference pins, or "" for a tag.
func (r Reference) Digest() string {
	if d, ok := r.ref.(name.Digest); ok {
		return d.DigestStr()
	}
	return ""
}

// AtDigest is the reference pinned to digest (sha256:HEX), in the same
// repository.
func (r Reference) AtDigest(digest string) (Reference, error) {
	d, err := name.NewDigest(r.ref.Context().Name()+"@"+digest, r.nameOpts()...)
	if err != nil {
		return Reference{}, &Error{Ref: r.String(), Kind: ErrReference, Err: err}
	}
	return Reference{ref: d, insecure: r.insecure}, nil
}

func (r Reference) nameOpts() []name.Option {
	if r.insecure {
		return []name.Option{name.Insecure}
	}
	return nil
}

// isLoopback reports whether host[:port] names this machine.
func isLoopback(hostport string) bool {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(strings.Trim(host, "[]"))
	return ip != nil && ip.IsLoopback()
}

// httpGuard refuses plain-HTTP requests to any host that is neither
// loopback nor listed as insecure. go-containerregistry itself also speaks
// plain HTTP to RFC 1918 addresses and *.local names; that is a decision
// for the operator (Options.Insecure), not a default. The guard sees every
// request, redirects to blob storage included.
type httpGuard struct {
	next     http.RoundTripper
	insecure []string
}

func (g httpGuard) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.URL.Scheme == "http" && !isLoopback(req.URL.Host) && !slices.Contains(g.insecure, req.URL.Host) {
		return nil, fail(req.URL.Host, ErrInsecure, "not a loopback registry and not listed as insecure")
	}
	return g.next.RoundTrip(req)
}
