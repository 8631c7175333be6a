package oauth

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	jose "github.com/go-jose/go-jose/v4"
)

// keySet is the issuer's signing keys, cached. It fetches them when first
// needed, again when they are older than maxAge, and when a token names a
// key id the cache does not hold (the issuer rotated its keys) — but never
// twice within minInterval, whatever tokens arrive: a flood of made-up key
// ids costs the issuer at most one request per interval.
type keySet struct {
	url         func(context.Context) (string, error)
	fetch       *fetcher
	now         func() time.Time
	minInterval time.Duration
	maxAge      time.Duration
	logger      *slog.Logger

	fetching sync.Mutex // one fetch at a time; waiters then see its result

	mu        sync.Mutex
	keys      []jose.JSONWebKey
	fetchedAt time.Time // of the keys held; zero when none
	tried     time.Time // the last fetch attempt, successful or not
	lastErr   error     // of that attempt
}

// lookup returns the keys a token signed with alg and naming kid may be
// verified with: the one with that id, or, for a token without kid, every
// signing key. It refreshes the set as the type's comment says.
func (k *keySet) lookup(ctx context.Context, kid string, alg string) ([]jose.JSONWebKey, *Error) {
	keys, stale := k.snapshot()
	if found := match(keys, kid, alg); len(found) > 0 && !stale {
		return found, nil
	}
	keys, err := k.refresh(ctx, false)
	if found := match(keys, kid, alg); len(found) > 0 {
		return found, nil // a failed refresh keeps the old keys serving
	}
	if err != nil {
		return nil, err
	}
	if kid == "" {
		return nil, invalid("the issuer's key set has no key for algorithm %s", alg)
	}
	return nil, invalid("the token names key %q, which the issuer's key set does not hold", truncate(kid))
}

func (k *keySet) snapshot() ([]jose.JSONWebKey, bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.keys, k.fetchedAt.IsZero() || k.now().Sub(k.fetchedAt) >= k.maxAge
}

// refresh fetches the key set unless one was fetched (or tried) within
// minInterval, and returns the keys then held. force ignores the interval
// (start-up discovery). The error is an *Error of CodeUnavailable when the
// fetch failed, or nil.
func (k *keySet) refresh(ctx context.Context, force bool) ([]jose.JSONWebKey, *Error) {
	k.fetching.Lock()
	defer k.fetching.Unlock()
	k.mu.Lock()
	tried, keys, lastErr := k.tried, k.keys, k.lastErr
	k.mu.Unlock()
	if !force && !tried.IsZero() && k.now().Sub(tried) < k.minInterval {
		if lastErr != nil && len(keys) == 0 {
			return nil, unavailable(lastErr)
		}
		return keys, nil
	}
	// The fetch is not the caller's to cancel: a client that hangs up
	// mid-fetch would otherwise record a failure that holds for the whole
	// interval, for everyone. The fetcher's own timeout bounds it.
	fresh, err := k.load(context.WithoutCancel(ctx))
	k.mu.Lock()
	defer k.mu.Unlock()
	k.tried, k.lastErr = k.now(), err
	if err != nil {
		k.logger.Warn("cannot fetch the OAuth issuer's signing keys", "err", err, "keys_held", len(k.keys))
		return k.keys, unavailable(err)
	}
	k.keys, k.fetchedAt = fresh, k.now()
	return k.keys, nil
}

// load fetches the JWKS and keeps its public signing keys.
func (k *keySet) load(ctx context.Context) ([]jose.JSONWebKey, error) {
	u, err := k.url(ctx)
	if err != nil {
		return nil, err
	}
	var set jose.JSONWebKeySet
	if err := k.fetch.getJSON(ctx, u, &set); err != nil {
		return nil, err
	}
	var keys []jose.JSONWebKey
	for _, key := range set.Keys {
		// Only public asymmetric signing keys: a symmetric ("oct") key in
		// a published set would let anyone who read it mint tokens.
		if (key.Use == "" || key.Use == "sig") && !isSymmetric(key) && key.Valid() {
			keys = append(keys, key.Public())
		}
	}
	if len(keys) == 0 {
		return nil, fmt.Errorf("%s holds no public signing key", u)
	}
	return keys, nil
}

func isSymmetric(k jose.JSONWebKey) bool {
	_, ok := k.Key.([]byte)
	return ok
}

// match returns the keys of keys a token with kid and alg may be checked
// with: the key's own alg, when it states one, must be the token's.
func match(keys []jose.JSONWebKey, kid, alg string) []jose.JSONWebKey {
	var out []jose.JSONWebKey
	for _, key := range keys {
		if (kid == "" || key.KeyID == kid) && (key.Algorithm == "" || key.Algorithm == alg) {
			out = append(out, key)
		}
	}
	return out
}

// truncate shortens a value taken from a token for an error message.
func truncate(s string) string {
	if len(s) > 64 {
		return s[:64] + "…"
	}
	return s
}
