package transport

import (
	"bufio"
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/auth"
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
// in errors.
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
// as the token info's UserID. A nil *Tokens requires nothing.
//
// A refusal is 401 with "WWW-Authenticate: Bearer" (RFC 6750), adding
// error="invalid_token" when a token was sent and is not known, so that
// clients can tell "send a token" from "this token is wrong".
func (t *Tokens) Require(h http.Handler) http.Handler {
	if t == nil {
		return h
	}
	verify := func(_ context.Context, token string, _ *http.Request) (*auth.TokenInfo, error) {
		id, ok := t.Identity(token)
		if !ok {
			return nil, auth.ErrInvalidToken
		}
		return &auth.TokenInfo{UserID: id}, nil
	}
	// The SDK's middleware puts the identity where MCP handlers find it;
	// the refusals are answered here first, with the headers it leaves out.
	withIdentity := auth.RequireBearerToken(verify, &auth.RequireBearerTokenOptions{AllowMissingExpiration: true})(h)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		token, sent := bearerToken(r)
		if !sent {
			w.Header().Set("WWW-Authenticate", `Bearer realm="toolhost"`)
			writeRPCError(w, http.StatusUnauthorized, -32600, "unauthorized: send Authorization: Bearer <token> (toolhost call reads $TOOLHOST_TOKEN)")
			return
		}
		if _, ok := t.Identity(token); !ok {
			w.Header().Set("WWW-Authenticate", `Bearer realm="toolhost", error="invalid_token", error_description="the token is not known to this server"`)
			writeRPCError(w, http.StatusUnauthorized, -32600, "unauthorized: the bearer token is not known to this server")
			return
		}
		withIdentity.ServeHTTP(w, r)
	})
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
