// Package oauth makes toolhost an OAuth 2.1 resource server, as the MCP
// authorization spec (2025-06-18 and later) asks of an HTTP server: it
// validates access tokens, JWTs against the issuer's JWKS (RFC 9068 shape,
// keys found through RFC 8414 or OpenID Connect discovery) or opaque ones
// by RFC 7662 introspection; it serves RFC 9728 Protected Resource
// Metadata; and it says what a refused request's WWW-Authenticate header
// and status are.
//
// JWT and JWKS handling is github.com/go-jose/go-jose/v4: no cryptography
// is written here. Every fetch (metadata, JWKS, introspection) goes
// through one bounded HTTP client that obeys the same address rules as a
// tool's egress (internal/netguard).
package oauth

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/netip"
	"net/url"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"

	"github.com/toolhost/toolhost/internal/printable"
)

// Defaults of the Config fields whose zero value means "the default".
const (
	// DefaultLeeway is the clock skew allowed on exp, nbf and iat.
	DefaultLeeway = 30 * time.Second
	// DefaultRefreshInterval is the shortest time between two JWKS fetches
	// caused by tokens naming a key the cached set does not hold, so that
	// a flood of made-up key ids cannot hammer the issuer.
	DefaultRefreshInterval = 30 * time.Second
	// DefaultKeysMaxAge is how long a fetched JWKS is used before the
	// next token starts a refresh in the background (the token is checked
	// with the keys held meanwhile), so that retired keys go away.
	DefaultKeysMaxAge = time.Hour
	// DefaultFetchTimeout bounds each metadata, JWKS or introspection
	// request, connection included, and each key refresh as a whole
	// (metadata and JWKS).
	DefaultFetchTimeout = 10 * time.Second
	// DefaultIdentityClaim is the claim whose value is the caller's
	// identity.
	DefaultIdentityClaim = "sub"
	// MaxFetchBytes bounds a metadata, JWKS or introspection answer.
	MaxFetchBytes = 1 << 20
)

// Config configures a Verifier: the [auth.oauth] section of the config
// file (docs/CONFIG.md). Issuer and Resource are required.
type Config struct {
	// Issuer is the authorization server's issuer identifier; tokens
	// must carry it as iss, and its metadata must name it.
	Issuer string
	// Resource is this server's resource identifier (RFC 8707), the URL
	// clients reach /mcp at, such as "https://tools.example.com/mcp".
	Resource string
	// Audience, when set, is one more aud value accepted besides Resource
	// (for issuers that stamp a fixed API identifier rather than the
	// resource the client asked for).
	Audience string
	// JWKSURL, when set, is where the signing keys are, and the issuer's
	// metadata is not fetched for them.
	JWKSURL string
	// RequiredScopes must all be granted to a token; one missing is 403
	// insufficient_scope.
	RequiredScopes []string
	// IdentityClaim names the claim that identifies the caller; empty
	// means DefaultIdentityClaim.
	IdentityClaim string
	// IntrospectionURL, when set, is the RFC 7662 endpoint that opaque
	// (non-JWT) tokens are checked at, authenticating as ClientID with
	// ClientSecret (HTTP Basic).
	IntrospectionURL string
	ClientID         string
	ClientSecret     string
	// AllowNetworks are address ranges the fetches may reach although they
	// are not public (an issuer on a private network or on loopback in a
	// test). Without them such addresses are refused, and plain http is
	// accepted only for a loopback address inside them.
	AllowNetworks []netip.Prefix

	// Leeway is the clock skew allowed on exp, nbf and iat; 0 means
	// DefaultLeeway.
	Leeway time.Duration
	// RefreshInterval: see DefaultRefreshInterval; 0 means the default.
	RefreshInterval time.Duration
	// KeysMaxAge: see DefaultKeysMaxAge; 0 means the default.
	KeysMaxAge time.Duration
	// FetchTimeout: see DefaultFetchTimeout; 0 means the default.
	FetchTimeout time.Duration
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Logger receives a warning for each failed key fetch (at most one per
	// RefreshInterval) and introspection request, since clients are told
	// only that the issuer could not be reached; nil means slog.Default.
	Logger *slog.Logger
}

// Error codes of a refused token (RFC 6750 §3.1), and the one for an
// issuer that could not be asked.
const (
	CodeInvalidToken      = "invalid_token"
	CodeInsufficientScope = "insufficient_scope"
	CodeUnavailable       = "temporarily_unavailable"
)

// Error is a token the Verifier refuses, or could not check. Description
// says why without quoting the token. It matches auth.ErrInvalidToken under
// errors.Is when Code is CodeInvalidToken.
type Error struct {
	Code        string
	Description string
	// Scopes are the scopes a CodeInsufficientScope token lacked.
	Scopes []string
	Err    error
}

func (e *Error) Error() string {
	switch e.Code {
	case CodeInsufficientScope:
		return "insufficient_scope: " + e.Description
	case CodeUnavailable:
		return "the authorization server could not be reached to check the token: " + e.Description
	}
	return "invalid_token: " + e.Description
}

// Unwrap returns the underlying error, if any.
func (e *Error) Unwrap() error { return e.Err }

// Is makes an invalid token match auth.ErrInvalidToken.
func (e *Error) Is(target error) bool {
	return target == auth.ErrInvalidToken && e.Code == CodeInvalidToken
}

func invalid(format string, args ...any) *Error {
	return &Error{Code: CodeInvalidToken, Description: fmt.Sprintf(format, args...)}
}

func unavailable(err error) *Error {
	return &Error{Code: CodeUnavailable, Description: err.Error(), Err: err}
}

// Verifier validates access tokens for one resource. It is safe for
// concurrent use.
type Verifier struct {
	cfg       Config
	now       func() time.Time
	audiences []string
	keys      *keySet
	intro     *introspector
	checks    atomic.Int64 // signature checks made, for tests of their bound
}

// New checks cfg (see Check) and returns its Verifier. It makes no
// request: the issuer's metadata and keys are fetched when the first token
// needs them (or by Discover).
func New(cfg Config) (*Verifier, error) {
	if err := checkConfig(&cfg); err != nil {
		return nil, err
	}
	now := cfg.Now
	if now == nil {
		now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	f := newFetcher(cfg.AllowNetworks, cfg.FetchTimeout)
	v := &Verifier{cfg: cfg, now: now}
	v.audiences = []string{cfg.Resource}
	if o := origin(cfg.Resource); o != cfg.Resource {
		// The root metadata document names the origin as the resource
		// (RFC 9728 §3.3), so a client that found us there asks for it.
		v.audiences = append(v.audiences, o)
	}
	if cfg.Audience != "" && !slices.Contains(v.audiences, cfg.Audience) {
		v.audiences = append(v.audiences, cfg.Audience)
	}
	disc := &discovery{issuer: cfg.Issuer, fetch: f}
	v.keys = &keySet{
		url: func(ctx context.Context) (string, error) {
			if cfg.JWKSURL != "" {
				return cfg.JWKSURL, nil
			}
			return disc.jwksURI(ctx)
		},
		fetch: f, now: now, minInterval: cfg.RefreshInterval, maxAge: cfg.KeysMaxAge, deadline: cfg.FetchTimeout, logger: cfg.Logger,
	}
	if cfg.IntrospectionURL != "" {
		v.intro = newIntrospector(cfg, f, now)
	}
	return v, nil
}

// Check reports what makes cfg unusable, naming the config key: a missing
// issuer, a URL that is not https (plain http only to a loopback address
// in AllowNetworks), a resource that is not an absolute URL (unless
// resource is left out: the caller fills it in), introspection without
// client credentials.
func Check(cfg Config) error {
	if cfg.Resource == "" {
		cfg.Resource = "https://placeholder.invalid/mcp"
	}
	return checkConfig(&cfg)
}

// checkConfig refuses a Config that cannot work and fills its defaults.
func checkConfig(cfg *Config) error {
	if cfg.Issuer == "" {
		return errors.New("issuer: required (the authorization server's issuer URL)")
	}
	f := &fetcher{allow: cfg.AllowNetworks}
	for _, u := range []struct{ key, val string }{
		{"issuer", cfg.Issuer}, {"jwks_url", cfg.JWKSURL}, {"introspection_url", cfg.IntrospectionURL},
	} {
		if u.val == "" {
			continue
		}
		if err := f.checkURL(u.val); err != nil {
			return fmt.Errorf("%s: %w", u.key, err)
		}
	}
	if err := checkResource(cfg.Resource); err != nil {
		return fmt.Errorf("resource: %w", err)
	}
	if cfg.IntrospectionURL != "" && (cfg.ClientID == "" || cfg.ClientSecret == "") {
		return errors.New("introspection_url needs client_id and client_secret: the introspection endpoint authenticates toolhost (RFC 7662 §2.1)")
	}
	if cfg.IdentityClaim == "" {
		cfg.IdentityClaim = DefaultIdentityClaim
	}
	if cfg.Leeway <= 0 {
		cfg.Leeway = DefaultLeeway
	}
	if cfg.RefreshInterval <= 0 {
		cfg.RefreshInterval = DefaultRefreshInterval
	}
	if cfg.KeysMaxAge <= 0 {
		cfg.KeysMaxAge = DefaultKeysMaxAge
	}
	if cfg.FetchTimeout <= 0 {
		cfg.FetchTimeout = DefaultFetchTimeout
	}
	return nil
}

// checkResource accepts an absolute http(s) URL without query or fragment,
// the form the MCP spec gives a server's canonical URI.
func checkResource(s string) error {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return fmt.Errorf("%q is not an absolute http(s) URL such as \"https://tools.example.com/mcp\"", s)
	}
	if u.RawQuery != "" || u.Fragment != "" || u.User != nil {
		return fmt.Errorf("%q: a resource identifier has no query, fragment or user (RFC 8707 §2)", s)
	}
	if strings.Trim(u.EscapedPath(), pathChars) != "" {
		return fmt.Errorf("%q: keep the path to letters, digits and . _ ~ - / (it becomes the metadata document's path)", s)
	}
	if a, err := netip.ParseAddr(strings.Trim(u.Hostname(), "[]")); u.Scheme == "http" && u.Hostname() != "localhost" && (err != nil || !a.IsLoopback()) {
		return fmt.Errorf("%q: use https (clients would send their tokens in the clear; plain http only on loopback)", s)
	}
	return nil
}

// pathChars are the characters a resource path may hold.
const pathChars = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._~-/"

// origin is scheme://host of an absolute URL.
func origin(s string) string {
	u, err := url.Parse(s)
	if err != nil {
		return s
	}
	return u.Scheme + "://" + u.Host
}

// Discover fetches the issuer's metadata and keys now, so that a
// misconfigured issuer shows at start-up rather than at the first call. It
// waits for the fetch within ctx; the fetch goes on without it.
func (v *Verifier) Discover(ctx context.Context) error {
	if err := v.keys.refresh(ctx); err != nil {
		return err
	}
	return nil
}

// RequiredScopes returns the scopes every token must carry.
func (v *Verifier) RequiredScopes() []string { return slices.Clone(v.cfg.RequiredScopes) }

// Verify checks token and returns what it grants: UserID is the identity
// claim, Scopes the granted scopes, Expiration its exp. Every error is an
// *Error.
func (v *Verifier) Verify(ctx context.Context, token string) (*auth.TokenInfo, error) {
	var (
		c   *claims
		err *Error
	)
	if looksLikeJWT(token) || v.intro == nil {
		c, err = v.verifyJWT(ctx, token)
	} else {
		c, err = v.intro.check(ctx, token, v.audiences)
	}
	if err != nil {
		return nil, err
	}
	return v.grant(c)
}

// grant turns validated claims into token info, refusing a token without
// an identity or without the required scopes.
func (v *Verifier) grant(c *claims) (*auth.TokenInfo, error) {
	id, ok := c.raw[v.cfg.IdentityClaim].(string)
	if !ok || id == "" {
		return nil, invalid("the token has no %q claim to identify the caller by", v.cfg.IdentityClaim)
	}
	if _, _, bad := printable.First(id); bad {
		return nil, invalid("the token's %q claim holds a control or bidirectional formatting character; identities are printable text", v.cfg.IdentityClaim)
	}
	var missing []string
	for _, s := range v.cfg.RequiredScopes {
		if !slices.Contains(c.scopes, s) {
			missing = append(missing, s)
		}
	}
	if len(missing) > 0 {
		return nil, &Error{Code: CodeInsufficientScope, Scopes: missing,
			Description: "the token lacks scope " + strings.Join(missing, " ")}
	}
	return &auth.TokenInfo{UserID: id, Scopes: c.scopes, Expiration: c.exp}, nil
}

// looksLikeJWT reports whether token has the shape of a JWS compact
// serialization: three base64url parts.
func looksLikeJWT(token string) bool {
	return strings.Count(token, ".") == 2 && strings.HasPrefix(token, "ey")
}
