package transport

import (
	"bufio"
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/auth"

	"github.com/toolhost/toolhost/internal/printable"
)

// Tokens are the bearer tokens a server accepts, each with the identity it
// stands for (the caller that idempotency keys and per-caller limits are
// scoped by). It is immutable and safe for concurrent use.
type Tokens struct {
	entries []tokenEntry
}

type tokenEntry struct {
	identity string
	digest   [32]byte // sha256 of the token: compared in constant time
}

// ParseTokens reads one token per line: "identity:token", or a bare token
// whose identity is then "token-" and the first 8 hex digits of its
// sha256. Blank lines and lines starting with # are ignored. name is used
// in errors. An identity never holds ':' (the first one ends it), which
// keeps static identities apart from OAuth ones (OAuthIdentityPrefix), and
// one that holds a control character is an error (CheckIdentity).
func ParseTokens(name string, r io.Reader) (*Tokens, error) {
	t := &Tokens{}
	sc := bufio.NewScanner(r)
	for line := 1; sc.Scan(); line++ {
		text := strings.TrimSpace(sc.Text())
		if text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		identity, token, ok := strings.Cut(text, ":")
		if !ok {
			token, identity = text, ""
		}
		token = strings.TrimSpace(token)
		if len(token) < 16 {
			return nil, fmt.Errorf("%s:%d: token is %d characters; use at least 16 (e.g. openssl rand -hex 32)", name, line, len(token))
		}
		d := sha256.Sum256([]byte(token))
		if identity = strings.TrimSpace(identity); identity == "" {
			identity = "token-" + hex.EncodeToString(d[:4])
		}
		if err := CheckIdentity(identity); err != nil {
			return nil, fmt.Errorf("%s:%d: %w", name, line, err)
		}
		t.entries = append(t.entries, tokenEntry{identity: identity, digest: d})
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if len(t.entries) == 0 {
		return nil, fmt.Errorf("%s: no tokens", name)
	}
	return t, nil
}

// LoadTokens reads a token file (see ParseTokens).
func LoadTokens(path string) (*Tokens, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ParseTokens(path, f)
}

// Identities returns the identities the tokens stand for, in file order
// (an identity with several tokens once per token).
func (t *Tokens) Identities() []string {
	if t == nil {
		return nil
	}
	ids := make([]string, len(t.entries))
	for i, e := range t.entries {
		ids[i] = e.identity
	}
	return ids
}

// Identity returns the identity of token, comparing against every entry in
// constant time (digests first, so lengths leak nothing).
func (t *Tokens) Identity(token string) (string, bool) {
	d := sha256.Sum256([]byte(token))
	found := ""
	for _, e := range t.entries {
		if subtle.ConstantTimeCompare(d[:], e.digest[:]) == 1 {
			found = e.identity
		}
	}
	return found, found != ""
}

// Require wraps h so that every request must carry "Authorization: Bearer
// <token>" with a known token; the caller's identity reaches MCP handlers
// as the token info's UserID. A nil *Tokens requires nothing. It is
// RequireAny with static tokens alone.
func (t *Tokens) Require(h http.Handler) http.Handler {
	if t == nil {
		return h
	}
	return RequireAny(t, nil, h)
}

// OAuth checks access tokens that are not static tokens: package oauth's
// Verifier. Its methods are called concurrently.
type OAuth interface {
	// Verify returns what token grants (UserID is the caller's identity;
	// Scopes are kept for access rules), or why it is refused.
	Verify(ctx context.Context, token string) (*auth.TokenInfo, error)
	// Challenge returns the status and WWW-Authenticate header of a
	// refusal: err is Verify's error, or nil when no token was sent.
	Challenge(err error) (status int, header string)
}

// RequireAny wraps h so that every request must carry a bearer token that
// is one of t (compared in constant time, first) or that o accepts; the
// caller's identity reaches MCP handlers as the token info's UserID (and
// an OAuth token's scopes as its Scopes). With both nil it requires
// nothing.
//
// A refusal is 401 with WWW-Authenticate (RFC 6750), adding
// error="invalid_token" when a token was sent and is not accepted, so that
// clients can tell "send a token" from "this token is wrong"; with OAuth
// the header also points at the Protected Resource Metadata (RFC 9728),
// and a token without a required scope is 403 insufficient_scope.
func RequireAny(t *Tokens, o OAuth, h http.Handler) http.Handler {
	if t == nil && o == nil {
		return h
	}
	// The SDK's middleware puts the token info where MCP handlers find
	// it; the token is checked once, here, and handed to it.
	withIdentity := auth.RequireBearerToken(func(ctx context.Context, _ string, _ *http.Request) (*auth.TokenInfo, error) {
		if ti, ok := ctx.Value(checkedKey{}).(*auth.TokenInfo); ok {
			return ti, nil
		}
		return nil, auth.ErrInvalidToken
	}, &auth.RequireBearerTokenOptions{AllowMissingExpiration: true, ClockSkew: noSecondExpiryCheck})(h)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		token, sent := bearerToken(r)
		if !sent {
			refuseToken(w, r, o, nil, "unauthorized: send Authorization: Bearer <token> (toolhost call reads $TOOLHOST_TOKEN)")
			return
		}
		ti, err := checkToken(r.Context(), t, o, token)
		if errors.Is(err, errUnknownToken) {
			refuseToken(w, r, o, err, "unauthorized: the bearer token is not known to this server")
			return
		}
		if err != nil {
			refuseToken(w, r, o, err, "unauthorized: "+err.Error())
			return
		}
		markAuthenticated(r.Context())
		withIdentity.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), checkedKey{}, ti)))
	})
}

// noSecondExpiryCheck turns off the SDK middleware's own expiry check:
// the verifier has checked exp already, with its leeway and its (in tests,
// injected) clock, and a second check against the wall clock could only
// disagree with it.
const noSecondExpiryCheck = 100 * 365 * 24 * time.Hour

// checkedKey carries the token info RequireAny found to the SDK's
// middleware.
type checkedKey struct{}

// errUnknownToken is a token that is neither static nor OAuth-checked.
var errUnknownToken = fmt.Errorf("%w: the bearer token is not known to this server", auth.ErrInvalidToken)

// OAuthIdentityPrefix begins the identity of every caller with an OAuth
// token: "oauth:" and the token's identity claim ("oauth:auth0|123").
// Static identities cannot hold ':', and the operator names identities
// with --operator, so a subject the issuer's users can choose (an email,
// a username) never becomes a static identity or an operator, with its
// tasks, idempotency replays, warm instances and access rules. Access
// rules and --operator name OAuth callers in this form ("oauth:*" for
// all of them).
const OAuthIdentityPrefix = "oauth:"

// checkToken tries token as a static token, then as an OAuth one.
func checkToken(ctx context.Context, t *Tokens, o OAuth, token string) (*auth.TokenInfo, error) {
	if t != nil {
		if id, ok := t.Identity(token); ok {
			return &auth.TokenInfo{UserID: id}, nil
		}
	}
	if o == nil {
		return nil, errUnknownToken
	}
	ti, err := o.Verify(ctx, token)
	if err != nil {
		return nil, err
	}
	if err := CheckIdentity(ti.UserID); err != nil {
		// The verifier refuses such a subject already; this holds the
		// rule for any OAuth implementation.
		return nil, fmt.Errorf("%w: the token's identity: %v", auth.ErrInvalidToken, err)
	}
	named := *ti // the verifier may cache ti: a copy is renamed
	named.UserID = OAuthIdentityPrefix + ti.UserID
	return &named, nil
}

// CheckIdentity refuses an identity that holds a control character (NUL
// included), a line separator or a bidirectional formatting character
// (printable.Unsafe): identities scope idempotency keys, tasks and warm
// instances, are matched by access rules and printed in logs, and must
// read as what they are.
func CheckIdentity(id string) error {
	if r, at, bad := printable.First(id); bad {
		return fmt.Errorf("identity %q holds %U at byte %d; identities are printable text", printable.Line(id), r, at)
	}
	if !utf8.ValidString(id) {
		return fmt.Errorf("identity %q is not valid UTF-8", printable.Line(id))
	}
	return nil
}

// refuseToken answers a request without an acceptable token: with o's
// challenge when OAuth is on, else a plain Bearer one; the connection
// closes after it unless it has authenticated before.
func refuseToken(w http.ResponseWriter, r *http.Request, o OAuth, err error, message string) {
	closeUnlessAuthenticated(w, r)
	status, challenge := http.StatusUnauthorized, `Bearer realm="toolhost"`
	if err != nil {
		challenge += `, error="invalid_token", error_description="the token is not known to this server"`
	}
	if o != nil {
		status, challenge = o.Challenge(err)
	}
	if challenge != "" {
		w.Header().Set("WWW-Authenticate", challenge)
	}
	if status == http.StatusServiceUnavailable {
		// What failed is the operator's to read in the log, not the
		// client's: it may name addresses inside the network.
		w.Header().Set("Retry-After", "5")
		message = "unavailable: the authorization server could not be reached to check the token; try again in a few seconds"
	}
	writeRPCError(w, status, -32600, message)
}

// bearerToken is the token of an "Authorization: Bearer <token>" header.
// sent is false when there is no such header, or it is not of that form.
func bearerToken(r *http.Request) (token string, sent bool) {
	fields := strings.Fields(r.Header.Get("Authorization"))
	if len(fields) != 2 || !strings.EqualFold(fields[0], "bearer") {
		return "", false
	}
	return fields[1], true
}
