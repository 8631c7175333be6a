package oauth_test

import (
	"context"
	"encoding/base64"
	"errors"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
	"github.com/modelcontextprotocol/go-sdk/auth"

	"github.com/toolhost/toolhost/internal/oauth"
	"github.com/toolhost/toolhost/internal/testkit/oauthtest"
)

const resource = "https://tools.example.com/mcp"

// clock is an injectable clock that only moves when told to.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

var loopback = []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}

// setup returns a test issuer and a Verifier for it, on a clock that
// starts now.
func setup(t testing.TB, edit ...func(*oauth.Config)) (*oauthtest.Issuer, *oauth.Verifier, *clock) {
	t.Helper()
	is := oauthtest.New(t)
	clk := &clock{t: time.Now()}
	cfg := oauth.Config{Issuer: is.URL, Resource: resource, AllowNetworks: loopback, Now: clk.Now}
	for _, e := range edit {
		e(&cfg)
	}
	v, err := oauth.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return is, v, clk
}

// claims are valid claims for the test issuer and resource, with edits.
func claims(is *oauthtest.Issuer, now time.Time, edit map[string]any) map[string]any {
	c := map[string]any{
		"iss": is.URL, "aud": resource, "sub": "alice", "scope": "tools:read tools:call",
		"iat": now.Unix(), "exp": now.Add(5 * time.Minute).Unix(),
	}
	for k, v := range edit {
		if v == nil {
			delete(c, k)
		} else {
			c[k] = v
		}
	}
	return c
}

func wantCode(t *testing.T, err error, code, mention string) {
	t.Helper()
	var e *oauth.Error
	if !errors.As(err, &e) {
		t.Fatalf("error %v (%T), want an *oauth.Error %s", err, err, code)
	}
	if e.Code != code || !strings.Contains(e.Error(), mention) {
		t.Fatalf("error %q (code %s), want code %s mentioning %q", e, e.Code, code, mention)
	}
}

func TestVerifyJWT(t *testing.T) {
	is, v, clk := setup(t, func(c *oauth.Config) { c.RequiredScopes = []string{"tools:call"} })
	now := clk.Now()
	ti, err := v.Verify(context.Background(), is.Mint(claims(is, now, nil)))
	if err != nil {
		t.Fatal(err)
	}
	if ti.UserID != "alice" || strings.Join(ti.Scopes, " ") != "tools:read tools:call" || ti.Expiration.Unix() != now.Add(5*time.Minute).Unix() {
		t.Fatalf("token info %+v", ti)
	}
	for _, tt := range []struct {
		name    string
		edit    map[string]any
		code    string
		mention string
	}{
		{"wrong audience", map[string]any{"aud": "https://other.example.com/mcp"}, oauth.CodeInvalidToken, `audience "https://other.example.com/mcp"`},
		{"no audience", map[string]any{"aud": nil}, oauth.CodeInvalidToken, "audience"},
		{"wrong issuer", map[string]any{"iss": "https://evil.example.com"}, oauth.CodeInvalidToken, `issued by "https://evil.example.com"`},
		{"expired", map[string]any{"exp": now.Add(-time.Minute).Unix()}, oauth.CodeInvalidToken, "expired"},
		{"not yet valid", map[string]any{"nbf": now.Add(time.Minute).Unix()}, oauth.CodeInvalidToken, "not valid before"},
		{"no exp", map[string]any{"exp": nil}, oauth.CodeInvalidToken, "no exp"},
		{"no sub", map[string]any{"sub": nil}, oauth.CodeInvalidToken, `no "sub" claim`},
		{"missing scope", map[string]any{"scope": "tools:read"}, oauth.CodeInsufficientScope, "lacks scope tools:call"},
		{"malformed exp", map[string]any{"exp": "soon"}, oauth.CodeInvalidToken, "malformed registered claims"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := v.Verify(context.Background(), is.Mint(claims(is, now, tt.edit)))
			wantCode(t, err, tt.code, tt.mention)
			if tt.code == oauth.CodeInvalidToken && !errors.Is(err, auth.ErrInvalidToken) {
				t.Errorf("%v does not match auth.ErrInvalidToken", err)
			}
		})
	}
}

func TestLeeway(t *testing.T) {
	is, v, clk := setup(t)
	tok := is.Mint(claims(is, clk.Now(), nil))
	clk.Advance(5*time.Minute + oauth.DefaultLeeway - time.Second)
	if _, err := v.Verify(context.Background(), tok); err != nil {
		t.Fatalf("within the leeway: %v", err)
	}
	clk.Advance(2 * time.Second)
	_, err := v.Verify(context.Background(), tok)
	wantCode(t, err, oauth.CodeInvalidToken, "expired")
}

func TestAudienceAlternatives(t *testing.T) {
	is, v, clk := setup(t, func(c *oauth.Config) { c.Audience = "api://toolhost" })
	for _, aud := range []any{"api://toolhost", "https://tools.example.com", []string{"x", resource}} {
		if _, err := v.Verify(context.Background(), is.Mint(claims(is, clk.Now(), map[string]any{"aud": aud}))); err != nil {
			t.Errorf("aud %v: %v", aud, err)
		}
	}
}

func TestIdentityClaim(t *testing.T) {
	is, v, clk := setup(t, func(c *oauth.Config) { c.IdentityClaim = "email" })
	ti, err := v.Verify(context.Background(), is.Mint(claims(is, clk.Now(), map[string]any{"email": "bob@example.com"})))
	if err != nil || ti.UserID != "bob@example.com" {
		t.Fatalf("%+v, %v", ti, err)
	}
}

// Tokens signed with "none" or with HMAC are refused before any key is
// looked at, even an HMAC keyed with the issuer's public key (algorithm
// confusion).
func TestRefusesNoneAndHMAC(t *testing.T) {
	is, v, clk := setup(t)
	payload := base64.RawURLEncoding.EncodeToString([]byte(`{"iss":"` + is.URL + `","aud":"` + resource + `","sub":"mallory","exp":9999999999}`))
	none := base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"none","typ":"JWT"}`)) + "." + payload + "."
	_, err := v.Verify(context.Background(), none)
	wantCode(t, err, oauth.CodeInvalidToken, "asymmetric")

	sig, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.HS256, Key: []byte("the issuer's public key, as bytes")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	hs, err := jwt.Signed(sig).Claims(claims(is, clk.Now(), map[string]any{"sub": "mallory"})).Serialize()
	if err != nil {
		t.Fatal(err)
	}
	_, err = v.Verify(context.Background(), hs)
	wantCode(t, err, oauth.CodeInvalidToken, "asymmetric")
	if n := is.JWKSFetches.Load(); n != 0 {
		t.Errorf("the JWKS was fetched %d times for tokens refused on their algorithm", n)
	}
}

// A token signed by a key the issuer never published, under a published
// key id, fails on its signature.
func TestForgedSignature(t *testing.T) {
	is, v, clk := setup(t)
	other := oauthtest.New(t)
	tok := other.Mint(claims(is, clk.Now(), nil)) // same kid ("key-1"), another key
	_, err := v.Verify(context.Background(), tok)
	wantCode(t, err, oauth.CodeInvalidToken, "signature")
}

// After the issuer rotates its key, a token naming the new key id makes
// the verifier fetch the JWKS again, once the refresh interval allows.
func TestRotationRefetchesKeys(t *testing.T) {
	is, v, clk := setup(t)
	if _, err := v.Verify(context.Background(), is.Mint(claims(is, clk.Now(), nil))); err != nil {
		t.Fatal(err)
	}
	is.Rotate()
	is.Retire()
	clk.Advance(oauth.DefaultRefreshInterval)
	if _, err := v.Verify(context.Background(), is.Mint(claims(is, clk.Now(), nil))); err != nil {
		t.Fatalf("token signed with the rotated key: %v", err)
	}
	if n := is.JWKSFetches.Load(); n != 2 {
		t.Fatalf("JWKS fetched %d times, want 2 (first use, then the unknown kid)", n)
	}
}

// Many tokens naming unknown key ids do not hammer the issuer: one fetch
// per refresh interval at most.
func TestUnknownKidsRefreshIsBounded(t *testing.T) {
	is, v, clk := setup(t)
	if _, err := v.Verify(context.Background(), is.Mint(claims(is, clk.Now(), nil))); err != nil {
		t.Fatal(err)
	}
	stranger := oauthtest.New(t) // its keys are never published by is
	// Each token names a new key id (key-2, key-3, …) signed by a key
	// that is never published.
	mint := func() string {
		stranger.Rotate()
		return stranger.Mint(claims(is, clk.Now(), nil))
	}
	for range 50 {
		_, err := v.Verify(context.Background(), mint())
		wantCode(t, err, oauth.CodeInvalidToken, "does not hold")
	}
	if n := is.JWKSFetches.Load(); n != 1 {
		t.Fatalf("JWKS fetched %d times within one refresh interval, want 1", n)
	}
	clk.Advance(oauth.DefaultRefreshInterval)
	for range 50 {
		_, _ = v.Verify(context.Background(), mint())
	}
	if n := is.JWKSFetches.Load(); n != 2 {
		t.Fatalf("JWKS fetched %d times after one more interval, want 2", n)
	}
}

func TestMetadataDiscoveryFallsBackToOIDC(t *testing.T) {
	is, v, clk := setup(t)
	is.OIDCOnly = true
	if _, err := v.Verify(context.Background(), is.Mint(claims(is, clk.Now(), nil))); err != nil {
		t.Fatal(err)
	}
	if n := is.MetadataFetches.Load(); n != 1 {
		t.Fatalf("metadata fetched %d times, want 1 (the OpenID Connect path)", n)
	}
}

func TestIntrospection(t *testing.T) {
	is, _, clk := setup(t)
	v, err := oauth.New(oauth.Config{Issuer: is.URL, Resource: resource, AllowNetworks: loopback, Now: clk.Now,
		IntrospectionURL: is.URL + "/introspect", ClientID: oauthtest.ClientID, ClientSecret: oauthtest.ClientSecret,
		RequiredScopes: []string{"tools:call"}})
	if err != nil {
		t.Fatal(err)
	}
	now := clk.Now()
	tok := is.Opaque(map[string]any{"sub": "carol", "scope": "tools:call", "aud": resource, "iss": is.URL, "exp": now.Add(time.Hour).Unix()})
	ti, err := v.Verify(context.Background(), tok)
	if err != nil || ti.UserID != "carol" || len(ti.Scopes) != 1 {
		t.Fatalf("%+v, %v", ti, err)
	}
	if _, err := v.Verify(context.Background(), tok); err != nil {
		t.Fatal(err)
	}
	if n := is.Introspections.Load(); n != 1 {
		t.Fatalf("introspected %d times, want 1 (the answer is kept briefly)", n)
	}
	is.Revoke(tok)
	clk.Advance(time.Minute)
	_, err = v.Verify(context.Background(), tok)
	wantCode(t, err, oauth.CodeInvalidToken, "not active")

	for _, tt := range []struct {
		claims  map[string]any
		code    string
		mention string
	}{
		{map[string]any{"sub": "carol", "scope": "tools:call", "aud": "https://other.example.com"}, oauth.CodeInvalidToken, "audience"},
		{map[string]any{"sub": "carol", "scope": "tools:call", "iss": "https://evil.example.com"}, oauth.CodeInvalidToken, "issued by"},
		{map[string]any{"sub": "carol", "scope": "tools:call", "exp": now.Unix()}, oauth.CodeInvalidToken, "expired"},
		{map[string]any{"sub": "carol", "scope": "tools:read"}, oauth.CodeInsufficientScope, "tools:call"},
		{map[string]any{"scope": "tools:call"}, oauth.CodeInvalidToken, `no "sub"`},
	} {
		_, err := v.Verify(context.Background(), is.Opaque(tt.claims))
		wantCode(t, err, tt.code, tt.mention)
	}

	bad, err := oauth.New(oauth.Config{Issuer: is.URL, Resource: resource, AllowNetworks: loopback,
		IntrospectionURL: is.URL + "/introspect", ClientID: oauthtest.ClientID, ClientSecret: "wrong-secret"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = bad.Verify(context.Background(), is.Opaque(map[string]any{"sub": "carol"}))
	wantCode(t, err, oauth.CodeUnavailable, "HTTP 401")
	if strings.Contains(err.Error(), "wrong-secret") {
		t.Fatalf("the error shows the client secret: %v", err)
	}
}

// Without allow_networks, an issuer on loopback is refused: over http by
// the configuration check, over https at the dial.
func TestFetchRules(t *testing.T) {
	is := oauthtest.New(t)
	if err := oauth.Check(oauth.Config{Issuer: is.URL, Resource: resource}); err == nil || !strings.Contains(err.Error(), "use https") {
		t.Fatalf("http issuer on loopback without allow_networks: %v", err)
	}
	if err := oauth.Check(oauth.Config{Issuer: is.URL, Resource: resource, AllowNetworks: []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}}); err == nil {
		t.Fatal("http issuer on loopback with another network allowed: no error")
	}
	if err := oauth.Check(oauth.Config{Issuer: "https://issuer.example.com", Resource: "http://tools.example.com/mcp"}); err == nil || !strings.Contains(err.Error(), "resource") {
		t.Fatalf("http resource off loopback: %v", err)
	}
	if err := oauth.Check(oauth.Config{Issuer: "https://issuer.example.com", Resource: "https://tools.example.com/{x} y"}); err == nil || !strings.Contains(err.Error(), "path") {
		t.Fatalf("a resource path that is no mux pattern: %v", err)
	}
	if err := oauth.Check(oauth.Config{Issuer: "https://issuer.example.com", IntrospectionURL: "https://issuer.example.com/i"}); err == nil || !strings.Contains(err.Error(), "client_id") {
		t.Fatalf("introspection without credentials: %v", err)
	}
	v, err := oauth.New(oauth.Config{Issuer: "https://127.0.0.1:1", Resource: resource})
	if err != nil {
		t.Fatal(err)
	}
	_, err = v.Verify(context.Background(), is.Mint(claims(is, time.Now(), nil)))
	wantCode(t, err, oauth.CodeUnavailable, "loopback address")
}

func TestChallenge(t *testing.T) {
	_, v, _ := setup(t, func(c *oauth.Config) { c.RequiredScopes = []string{"tools:call", "tools:read"} })
	meta := `resource_metadata="https://tools.example.com/.well-known/oauth-protected-resource/mcp"`
	for _, tt := range []struct {
		err    error
		status int
		header string
	}{
		{nil, 401, `Bearer ` + meta + `, scope="tools:call tools:read"`},
		{&oauth.Error{Code: oauth.CodeInvalidToken, Description: `bad "quote"`}, 401,
			`Bearer error="invalid_token", error_description="bad 'quote'", ` + meta + `, scope="tools:call tools:read"`},
		{&oauth.Error{Code: oauth.CodeInsufficientScope, Description: "lacks tools:read"}, 403,
			`Bearer error="insufficient_scope", error_description="lacks tools:read", ` + meta + `, scope="tools:call tools:read"`},
		{&oauth.Error{Code: oauth.CodeUnavailable, Description: "down"}, 503, ""},
		{errors.New("not known"), 401, `Bearer error="invalid_token", ` + meta + `, scope="tools:call tools:read"`},
	} {
		status, header := v.Challenge(tt.err)
		if status != tt.status || header != tt.header {
			t.Errorf("Challenge(%v) = %d %s\nwant %d %s", tt.err, status, header, tt.status, tt.header)
		}
	}
}

// Hammer: goroutines verify valid tokens and tokens with unknown key ids
// while the issuer rotates, under -race. Valid tokens signed with a key
// the verifier has fetched always pass.
func TestVerifyHammer(t *testing.T) {
	is, v, clk := setup(t)
	good := is.Mint(claims(is, clk.Now(), nil))
	stranger := oauthtest.New(t)
	bad := stranger.Mint(claims(is, clk.Now(), map[string]any{}))
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 50 {
				if _, err := v.Verify(context.Background(), good); err != nil {
					t.Errorf("goroutine %d, %d: %v", g, i, err)
					return
				}
				_, _ = v.Verify(context.Background(), bad)
				if g == 0 && i%10 == 0 {
					is.Rotate() // published beside the old keys
					clk.Advance(oauth.DefaultRefreshInterval)
				}
			}
		}()
	}
	wg.Wait()
}

// A caller that gives up while the keys are being fetched does not leave
// a failure behind for the others.
func TestCancelledCallerDoesNotSpoilTheFetch(t *testing.T) {
	is, v, clk := setup(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, _ = v.Verify(ctx, is.Mint(claims(is, clk.Now(), nil)))
	if _, err := v.Verify(context.Background(), is.Mint(claims(is, clk.Now(), nil))); err != nil {
		t.Fatalf("after a cancelled caller: %v", err)
	}
}
