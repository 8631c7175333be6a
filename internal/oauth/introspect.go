package oauth

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"log/slog"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"
)

// introspectionTTL bounds how long an introspection answer is reused: a
// revoked token stops working within it.
const introspectionTTL = 30 * time.Second

// maxCached bounds the introspection cache; beyond it answers are not
// kept (a flood of distinct tokens costs the issuer requests, not memory).
const maxCached = 4096

// introspector checks opaque tokens at the issuer's RFC 7662 endpoint and
// keeps active answers briefly, keyed by the token's digest.
type introspector struct {
	url, id, secret string
	issuer          string
	leeway          time.Duration
	fetch           *fetcher
	now             func() time.Time
	logger          *slog.Logger

	mu    sync.Mutex
	cache map[[32]byte]cached
}

type cached struct {
	c     *claims
	until time.Time
}

func newIntrospector(cfg Config, f *fetcher, now func() time.Time) *introspector {
	return &introspector{url: cfg.IntrospectionURL, id: cfg.ClientID, secret: cfg.ClientSecret,
		issuer: cfg.Issuer, leeway: cfg.Leeway, fetch: f, now: now, logger: cfg.Logger, cache: map[[32]byte]cached{}}
}

// check introspects token; an inactive token, or one for another issuer
// or audience, or outside its validity period, is invalid.
func (in *introspector) check(ctx context.Context, token string, audiences []string) (*claims, *Error) {
	key := sha256.Sum256([]byte(token))
	now := in.now()
	in.mu.Lock()
	if c, ok := in.cache[key]; ok && now.Before(c.until) {
		in.mu.Unlock()
		return c.c, nil
	}
	in.mu.Unlock()
	var raw map[string]any
	form := url.Values{"token": {token}, "token_type_hint": {"access_token"}}
	if err := in.fetch.postForm(ctx, in.url, form, in.id, in.secret, &raw); err != nil {
		in.logger.Warn("OAuth token introspection failed", "err", err)
		return nil, unavailable(err)
	}
	if active, _ := raw["active"].(bool); !active {
		return nil, invalid("the issuer says the token is not active")
	}
	if iss, ok := raw["iss"].(string); ok && iss != in.issuer {
		return nil, invalid("the token was issued by %q, not by %q", truncate(iss), in.issuer)
	}
	if aud, ok := audienceOf(raw["aud"]); ok && !slices.ContainsFunc(aud, func(a string) bool { return slices.Contains(audiences, a) }) {
		return nil, invalid("the token is for audience %q, not for this server (%s)", truncate(strings.Join(aud, " ")), strings.Join(audiences, " or "))
	}
	exp, hasExp := numericDate(raw["exp"])
	if hasExp && now.Add(-in.leeway).After(exp) {
		return nil, invalid("the token expired at %s", exp.UTC().Format(time.RFC3339))
	}
	if nbf, ok := numericDate(raw["nbf"]); ok && now.Add(in.leeway).Before(nbf) {
		return nil, invalid("the token is not valid before %s", nbf.UTC().Format(time.RFC3339))
	}
	c := &claims{raw: raw, scopes: strings.Fields(stringOf(raw["scope"])), exp: exp}
	until := now.Add(introspectionTTL)
	if hasExp && exp.Before(until) {
		until = exp
	}
	in.keep(key, cached{c: c, until: until}, now)
	return c, nil
}

// keep caches an answer, first dropping expired ones when the cache is
// full.
func (in *introspector) keep(key [32]byte, c cached, now time.Time) {
	in.mu.Lock()
	defer in.mu.Unlock()
	if len(in.cache) >= maxCached {
		for k, e := range in.cache {
			if !now.Before(e.until) {
				delete(in.cache, k)
			}
		}
	}
	if len(in.cache) < maxCached {
		in.cache[key] = c
	}
}

// audienceOf reads aud, a string or a list of strings.
func audienceOf(v any) ([]string, bool) {
	switch a := v.(type) {
	case string:
		return []string{a}, true
	case []any:
		var out []string
		for _, e := range a {
			if s, ok := e.(string); ok {
				out = append(out, s)
			}
		}
		return out, true
	}
	return nil, false
}

// numericDate reads a JSON number of seconds since the epoch.
func numericDate(v any) (time.Time, bool) {
	switch n := v.(type) {
	case float64:
		return time.Unix(int64(n), 0), true
	case json.Number:
		f, err := n.Float64()
		return time.Unix(int64(f), 0), err == nil
	}
	return time.Time{}, false
}

func stringOf(v any) string {
	s, _ := v.(string)
	return s
}
