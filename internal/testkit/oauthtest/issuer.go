// Package oauthtest runs an OAuth authorization server for tests: RFC 8414
// metadata, a JWKS whose keys can be rotated, JWT access tokens minted with
// go-jose, and an RFC 7662 introspection endpoint for opaque tokens. It
// listens on loopback (httptest), so a Verifier reaches it only when
// allow_networks lists 127.0.0.1.
package oauthtest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
)

// ClientID and ClientSecret are the credentials the introspection endpoint
// accepts.
const (
	ClientID     = "toolhost-rs"
	ClientSecret = "introspection-secret-0123456789"
)

// Issuer is a running test authorization server. Its methods are safe for
// concurrent use.
type Issuer struct {
	// URL is the issuer identifier (the server's base URL).
	URL string
	// Server is the HTTP server.
	Server *httptest.Server
	// OIDCOnly serves metadata only at the OpenID Connect path, so that
	// the RFC 8414 path answers 404 (set before the first request).
	OIDCOnly bool

	// JWKSFetches, MetadataFetches and Introspections count requests.
	JWKSFetches, MetadataFetches, Introspections atomic.Int64

	mu         sync.Mutex
	keys       []*jose.JSONWebKey // published, newest last; the newest signs
	opaque     map[string]map[string]any
	nextKid    int
	onJWKS     func() // called before each JWKS answer (a test stalls here)
	onMetadata func() // called before each metadata answer
	padding    int    // bytes of filler in the JWKS document
}

// OnJWKS makes the issuer call f before it answers each JWKS request
// (nil: none): a test stalls the answer there.
func (is *Issuer) OnJWKS(f func()) {
	is.mu.Lock()
	is.onJWKS = f
	is.mu.Unlock()
}

// OnMetadata makes the issuer call f before it answers each metadata
// request (nil: none).
func (is *Issuer) OnMetadata(f func()) {
	is.mu.Lock()
	is.onMetadata = f
	is.mu.Unlock()
}

// Pad adds n bytes of filler to the JWKS document (a member verifiers
// ignore), to make a set large without many keys.
func (is *Issuer) Pad(n int) {
	is.mu.Lock()
	is.padding = n
	is.mu.Unlock()
}

// Key returns the signing key (private) with key id kid, or nil.
func (is *Issuer) Key(kid string) *jose.JSONWebKey {
	is.mu.Lock()
	defer is.mu.Unlock()
	for _, k := range is.keys {
		if k.KeyID == kid {
			return k
		}
	}
	return nil
}

// New starts an issuer with one signing key; it stops when t ends.
func New(t testing.TB) *Issuer {
	t.Helper()
	is := &Issuer{opaque: map[string]map[string]any{}}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /.well-known/oauth-authorization-server", func(w http.ResponseWriter, r *http.Request) {
		if is.OIDCOnly {
			http.NotFound(w, r)
			return
		}
		is.metadata(w)
	})
	mux.HandleFunc("GET /.well-known/openid-configuration", func(w http.ResponseWriter, _ *http.Request) { is.metadata(w) })
	mux.HandleFunc("GET /jwks", is.jwks)
	mux.HandleFunc("POST /introspect", is.introspect)
	is.Server = httptest.NewServer(mux)
	is.URL = is.Server.URL
	t.Cleanup(is.Server.Close)
	is.Rotate()
	return is
}

func (is *Issuer) metadata(w http.ResponseWriter) {
	is.MetadataFetches.Add(1)
	is.mu.Lock()
	f := is.onMetadata
	is.mu.Unlock()
	if f != nil {
		f()
	}
	writeJSON(w, map[string]any{
		"issuer":                                is.URL,
		"authorization_endpoint":                is.URL + "/authorize",
		"token_endpoint":                        is.URL + "/token",
		"jwks_uri":                              is.URL + "/jwks",
		"introspection_endpoint":                is.URL + "/introspect",
		"response_types_supported":              []string{"code"},
		"code_challenge_methods_supported":      []string{"S256"},
		"token_endpoint_auth_methods_supported": []string{"none"},
	})
}

func (is *Issuer) jwks(w http.ResponseWriter, _ *http.Request) {
	is.JWKSFetches.Add(1)
	is.mu.Lock()
	var set struct {
		Keys    []jose.JSONWebKey `json:"keys"`
		Padding string            `json:"padding,omitempty"`
	}
	for _, k := range is.keys {
		set.Keys = append(set.Keys, k.Public())
	}
	set.Padding = strings.Repeat("x", is.padding)
	f := is.onJWKS
	is.mu.Unlock()
	if f != nil {
		f()
	}
	writeJSON(w, set)
}

func (is *Issuer) introspect(w http.ResponseWriter, r *http.Request) {
	is.Introspections.Add(1)
	if id, secret, ok := r.BasicAuth(); !ok || id != ClientID || secret != ClientSecret {
		w.Header().Set("WWW-Authenticate", `Basic realm="introspection"`)
		http.Error(w, `{"error":"invalid_client"}`, http.StatusUnauthorized)
		return
	}
	is.mu.Lock()
	claims, ok := is.opaque[r.PostFormValue("token")]
	is.mu.Unlock()
	if !ok {
		writeJSON(w, map[string]any{"active": false})
		return
	}
	out := map[string]any{"active": true}
	for k, v := range claims {
		out[k] = v
	}
	writeJSON(w, out)
}

// Rotate publishes a new signing key, which signs every token minted from
// now on, and returns its key id. Old keys stay published.
func (is *Issuer) Rotate() string {
	priv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		panic(err)
	}
	is.mu.Lock()
	defer is.mu.Unlock()
	is.nextKid++
	k := &jose.JSONWebKey{Key: priv, KeyID: "key-" + strconv.Itoa(is.nextKid), Algorithm: string(jose.ES256), Use: "sig"}
	is.keys = append(is.keys, k)
	return k.KeyID
}

// Retire stops publishing every key but the newest.
func (is *Issuer) Retire() {
	is.mu.Lock()
	defer is.mu.Unlock()
	is.keys = is.keys[len(is.keys)-1:]
}

// Mint signs claims with the newest key (ES256) and returns the JWT.
func (is *Issuer) Mint(claims map[string]any) string {
	is.mu.Lock()
	k := is.keys[len(is.keys)-1]
	is.mu.Unlock()
	return MintWith(k, claims)
}

// MintWith signs claims with key, naming its key id, and returns the JWT.
func MintWith(key *jose.JSONWebKey, claims map[string]any) string {
	sig, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.SignatureAlgorithm(key.Algorithm), Key: key},
		(&jose.SignerOptions{}).WithType("at+jwt"))
	if err != nil {
		panic(err)
	}
	s, err := jwt.Signed(sig).Claims(claims).Serialize()
	if err != nil {
		panic(err)
	}
	return s
}

// Opaque registers claims for a new opaque token, which introspection
// answers as active with them, and returns the token.
func (is *Issuer) Opaque(claims map[string]any) string {
	b := make([]byte, 24)
	_, _ = rand.Read(b)
	tok := "opaque-" + hex.EncodeToString(b)
	is.mu.Lock()
	is.opaque[tok] = claims
	is.mu.Unlock()
	return tok
}

// Revoke makes introspection answer an opaque token as inactive.
func (is *Issuer) Revoke(token string) {
	is.mu.Lock()
	delete(is.opaque, token)
	is.mu.Unlock()
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}
