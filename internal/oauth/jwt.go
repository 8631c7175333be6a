package oauth

import (
	"context"
	"errors"
	"strings"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
)

// algorithms are the signature algorithms a token may use: asymmetric
// ones only. "none" and the HMAC family are refused before any key is
// looked at: with HMAC, a verifier that held the issuer's public key as a
// secret would accept tokens minted with it (the classic alg confusion).
var algorithms = []jose.SignatureAlgorithm{
	jose.RS256, jose.RS384, jose.RS512,
	jose.PS256, jose.PS384, jose.PS512,
	jose.ES256, jose.ES384, jose.ES512,
	jose.EdDSA,
}

// claims are what a validated token says.
type claims struct {
	raw    map[string]any
	scopes []string
	exp    time.Time
}

// verifyJWT checks a JWT access token: signature with one of the issuer's
// keys, then iss, aud, exp, nbf and iat.
func (v *Verifier) verifyJWT(ctx context.Context, token string) (*claims, *Error) {
	tok, err := jwt.ParseSigned(token, algorithms)
	if err != nil {
		return nil, invalid("not a JWT signed with an asymmetric algorithm (%s)", strings.TrimPrefix(err.Error(), "go-jose/go-jose: "))
	}
	if len(tok.Headers) != 1 {
		return nil, invalid("a JWT has exactly one signature")
	}
	h := tok.Headers[0]
	keys, e := v.keys.lookup(ctx, h.KeyID, h.Algorithm)
	if e != nil {
		return nil, e
	}
	var raw map[string]any
	verified := false
	for _, key := range keys {
		v.checks.Add(1)
		if tok.Claims(key.Key, &raw) == nil {
			verified = true
			break
		}
	}
	if !verified {
		return nil, invalid("the signature does not verify with the issuer's keys")
	}
	// The payload is verified now; decoding it again into the registered
	// claims tells a malformed claim apart from a bad signature.
	var std jwt.Claims
	if err := tok.UnsafeClaimsWithoutVerification(&std); err != nil {
		return nil, invalid("malformed registered claims: %s", strings.TrimPrefix(err.Error(), "go-jose/go-jose/jwt: "))
	}
	if std.Expiry == nil {
		return nil, invalid("the token has no exp claim (RFC 9068 §2.2)")
	}
	err = std.ValidateWithLeeway(jwt.Expected{Issuer: v.cfg.Issuer, AnyAudience: v.audiences, Time: v.now()}, v.cfg.Leeway)
	if err != nil {
		return nil, claimError(err, std, v)
	}
	return &claims{raw: raw, scopes: scopesOf(raw), exp: std.Expiry.Time()}, nil
}

// claimError says which claim a token failed on, in words a client's
// operator can act on.
func claimError(err error, c jwt.Claims, v *Verifier) *Error {
	switch {
	case errors.Is(err, jwt.ErrInvalidIssuer):
		return invalid("the token was issued by %q, not by %q", truncate(c.Issuer), v.cfg.Issuer)
	case errors.Is(err, jwt.ErrInvalidAudience):
		return invalid("the token is for audience %q, not for this server (%s): ask for it with resource=%s (RFC 8707)",
			truncate(strings.Join(c.Audience, " ")), strings.Join(v.audiences, " or "), v.cfg.Resource)
	case errors.Is(err, jwt.ErrExpired):
		return invalid("the token expired at %s", c.Expiry.Time().UTC().Format(time.RFC3339))
	case errors.Is(err, jwt.ErrNotValidYet):
		return invalid("the token is not valid before %s", c.NotBefore.Time().UTC().Format(time.RFC3339))
	case errors.Is(err, jwt.ErrIssuedInTheFuture):
		return invalid("the token was issued in the future (iat); check the clocks")
	}
	return invalid("%s", strings.TrimPrefix(err.Error(), "go-jose/go-jose/jwt: "))
}

// scopesOf reads the granted scopes: RFC 9068's space-separated "scope",
// or "scp" (a list or a string) as some issuers write it.
func scopesOf(raw map[string]any) []string {
	if s, ok := raw["scope"].(string); ok {
		return strings.Fields(s)
	}
	switch s := raw["scp"].(type) {
	case string:
		return strings.Fields(s)
	case []any:
		var out []string
		for _, e := range s {
			if str, ok := e.(string); ok {
				out = append(out, str)
			}
		}
		return out
	}
	return nil
}
