package oauth

import (
	"context"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rsa"
	"encoding/json"
	"fmt"
	"log/slog"
	"sync"
	"time"

	jose "github.com/go-jose/go-jose/v4"
)

// Bounds on the issuer's key set and on the work one token costs.
const (
	// MaxJWKSKeys bounds the keys of a JWKS: a set with more is refused
	// whole (the keys held before keep serving). Issuers publish a
	// handful; thousands only multiply the work of parsing and checking.
	MaxJWKSKeys = 100
	// MaxJWKSBytes bounds a JWKS answer, below MaxFetchBytes.
	MaxJWKSBytes = 256 << 10
	// MaxKeyCandidates is how many keys one token's signature is checked
	// against at most: the keys with its kid, or for a token without kid
	// the first keys of the set that fit its algorithm.
	MaxKeyCandidates = 4
)

// keySet is the issuer's signing keys, cached. Requests never fetch: they
// use the keys held, and start a refresh in the background when the keys
// are older than maxAge, or when a token names a key id the set does not
// hold (the issuer rotated its keys) — only then does the request wait for
// the refresh, and only as long as its own context lets it. One refresh
// runs at a time, under a deadline, and never twice within minInterval,
// whatever tokens arrive: a flood of made-up key ids costs the issuer at
// most one request per interval.
type keySet struct {
	url         func(context.Context) (string, error)
	fetch       *fetcher
	now         func() time.Time
	minInterval time.Duration
	maxAge      time.Duration
	deadline    time.Duration // of one refresh, metadata included
	logger      *slog.Logger

	mu        sync.Mutex
	keys      []jose.JSONWebKey
	fetchedAt time.Time     // of the keys held; zero when none
	tried     time.Time     // the last refresh's start
	lastErr   error         // of the last refresh that ended
	running   chan struct{} // closed when the refresh under way ends; nil when none
}

// lookup returns the keys a token signed with alg and naming kid may be
// verified with (see match), refreshing the set as the type's comment
// says.
func (k *keySet) lookup(ctx context.Context, kid string, alg string) ([]jose.JSONWebKey, *Error) {
	keys, stale := k.snapshot()
	if found := match(keys, kid, alg); len(found) > 0 {
		if stale {
			k.start(false) // in the background: this request has its keys
		}
		return found, nil
	}
	keys, err := k.await(ctx, k.start(false))
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

// start begins a refresh unless one is under way (whose end it returns)
// or one began within minInterval (nil); force ignores the interval
// (start-up discovery).
func (k *keySet) start(force bool) <-chan struct{} {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.running != nil {
		return k.running
	}
	if !force && !k.tried.IsZero() && k.now().Sub(k.tried) < k.minInterval {
		return nil
	}
	k.tried = k.now()
	done := make(chan struct{})
	k.running = done
	go k.run(done)
	return done
}

// run is one refresh. It is nobody's request to cancel (a client that
// hangs up must not leave a failure that holds for the whole interval,
// for everyone): its own deadline bounds it.
func (k *keySet) run(done chan struct{}) {
	defer close(done)
	ctx, cancel := context.WithTimeout(context.Background(), k.deadline)
	defer cancel()
	fresh, err := k.load(ctx)
	k.mu.Lock()
	defer k.mu.Unlock()
	k.running, k.lastErr = nil, err
	if err != nil {
		k.logger.Warn("cannot fetch the OAuth issuer's signing keys", "err", err, "keys_held", len(k.keys))
		return
	}
	k.keys, k.fetchedAt = fresh, k.now()
}

// await waits for the refresh that ends with done, if any, or for ctx,
// and returns the keys then held. The error is an *Error of
// CodeUnavailable when that refresh failed (or, without one, the last
// did and no keys are held), or when ctx ended first.
func (k *keySet) await(ctx context.Context, done <-chan struct{}) ([]jose.JSONWebKey, *Error) {
	if done != nil {
		select {
		case <-done:
		case <-ctx.Done():
			return nil, unavailable(fmt.Errorf("gave up waiting for the issuer's signing keys: %w", ctx.Err()))
		}
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.lastErr != nil && (done != nil || len(k.keys) == 0) {
		return k.keys, unavailable(k.lastErr)
	}
	return k.keys, nil
}

// refresh runs a refresh now (or joins the one under way) and waits for
// it within ctx.
func (k *keySet) refresh(ctx context.Context) *Error {
	_, err := k.await(ctx, k.start(true))
	return err
}

// load fetches the JWKS and keeps its public signing keys. The set is
// bounded before any key is parsed: MaxJWKSBytes, then MaxJWKSKeys.
func (k *keySet) load(ctx context.Context) ([]jose.JSONWebKey, error) {
	u, err := k.url(ctx)
	if err != nil {
		return nil, err
	}
	var set struct {
		Keys []json.RawMessage `json:"keys"`
	}
	if err := k.fetch.getJSON(ctx, u, MaxJWKSBytes, &set); err != nil {
		return nil, err
	}
	if len(set.Keys) > MaxJWKSKeys {
		return nil, fmt.Errorf("%s holds %d keys, more than %d", u, len(set.Keys), MaxJWKSKeys)
	}
	var keys []jose.JSONWebKey
	for _, raw := range set.Keys {
		var key jose.JSONWebKey
		if key.UnmarshalJSON(raw) != nil {
			continue // a key type not understood is ignored (RFC 7517 §5)
		}
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
// with, at most MaxKeyCandidates of them, in the set's order: those with
// that kid (any key, without kid), whose own alg, when stated, is the
// token's, and whose type fits alg (an RSA key for RS* and PS*, a key on
// the named curve for ES*, Ed25519 for EdDSA).
func match(keys []jose.JSONWebKey, kid, alg string) []jose.JSONWebKey {
	var out []jose.JSONWebKey
	for _, key := range keys {
		if (kid == "" || key.KeyID == kid) && (key.Algorithm == "" || key.Algorithm == alg) && fits(key.Key, alg) {
			out = append(out, key)
			if len(out) == MaxKeyCandidates {
				break
			}
		}
	}
	return out
}

// fits reports whether a public key can check a signature made with alg.
func fits(key any, alg string) bool {
	switch k := key.(type) {
	case *rsa.PublicKey:
		switch jose.SignatureAlgorithm(alg) {
		case jose.RS256, jose.RS384, jose.RS512, jose.PS256, jose.PS384, jose.PS512:
			return true
		}
	case *ecdsa.PublicKey:
		switch jose.SignatureAlgorithm(alg) {
		case jose.ES256:
			return k.Curve == elliptic.P256()
		case jose.ES384:
			return k.Curve == elliptic.P384()
		case jose.ES512:
			return k.Curve == elliptic.P521()
		}
	case ed25519.PublicKey:
		return jose.SignatureAlgorithm(alg) == jose.EdDSA
	}
	return false
}

// truncate shortens a value taken from a token for an error message.
func truncate(s string) string {
	if len(s) > 64 {
		return s[:64] + "…"
	}
	return s
}
