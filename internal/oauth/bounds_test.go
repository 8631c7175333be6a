package oauth_test

import (
	"context"
	"testing"
	"time"

	"github.com/toolhost/toolhost/internal/oauth"
	"github.com/toolhost/toolhost/internal/testkit/oauthtest"
)

// Issue 27 item 5: the key set is bounded. A JWKS of more than
// MaxJWKSKeys keys (150 here, 30 KB: well under the 1 MiB answer cap) or
// more than MaxJWKSBytes (300 KB of filler beside one key) is refused
// whole, and the keys held before it keep verifying.
func TestHugeJWKSRefused(t *testing.T) {
	is, v, clk := setup(t)
	tok := is.Mint(claims(is, clk.Now(), nil))
	if _, err := v.Verify(context.Background(), tok); err != nil {
		t.Fatal(err)
	}
	for range 149 {
		is.Rotate()
	}
	err := v.Discover(context.Background())
	wantCode(t, err, oauth.CodeUnavailable, "holds 150 keys, more than 100")
	if _, err := v.Verify(context.Background(), tok); err != nil {
		t.Fatalf("the keys held before the refused set: %v", err)
	}

	big, bv, _ := setup(t)
	big.Pad(300 << 10)
	err = bv.Discover(context.Background())
	wantCode(t, err, oauth.CodeUnavailable, "larger than 262144 bytes")
}

// Issue 27 item 5: a refresh of keys past their age runs in the
// background; while it is stalled in the issuer, tokens the keys held can
// check verify at once, and many such requests make one fetch, not one
// each. The issuer's answer waits on a channel; the fetch timeout is a
// minute, so a request that waited behind it would outlast the 10 s bound
// (reached only by a Verify that waits for the fetch).
func TestStalledRefreshKeepsCachedKeysServing(t *testing.T) {
	is, v, clk := setup(t, func(c *oauth.Config) { c.FetchTimeout = time.Minute })
	tok := is.Mint(claims(is, clk.Now(), nil))
	if _, err := v.Verify(context.Background(), tok); err != nil {
		t.Fatal(err)
	}
	entered, release := make(chan struct{}, 8), make(chan struct{})
	is.OnJWKS(func() { entered <- struct{}{}; <-release })
	defer close(release)
	clk.Advance(oauth.DefaultKeysMaxAge)
	tok = is.Mint(claims(is, clk.Now(), nil)) // the same key, an hour later

	result := make(chan error, 1)
	go func() {
		_, err := v.Verify(context.Background(), tok)
		result <- err
	}()
	<-entered // the refresh is in the issuer, stalled
	select {
	case err := <-result:
		if err != nil {
			t.Fatalf("with cached keys and a stalled refresh: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Verify waited behind the stalled key refresh")
	}
	for range 20 {
		if _, err := v.Verify(context.Background(), tok); err != nil {
			t.Fatalf("while the refresh is stalled: %v", err)
		}
	}
	if n := is.JWKSFetches.Load(); n != 2 {
		t.Fatalf("%d JWKS fetches, want 2 (the first, and one refresh for 21 requests)", n)
	}
	select {
	case <-entered:
		t.Fatal("a second refresh started while one is under way")
	default:
	}
}

// Issue 27 item 5: a request that must wait for keys (none held yet)
// waits only as long as its own context; the metadata fetch holds no lock
// that keeps it there. Here the issuer's metadata answer is stalled.
func TestWaitForKeysEndsWithTheRequest(t *testing.T) {
	is, v, clk := setup(t, func(c *oauth.Config) { c.FetchTimeout = time.Minute })
	entered, release := make(chan struct{}, 8), make(chan struct{})
	is.OnMetadata(func() { entered <- struct{}{}; <-release })
	defer close(release)
	tok := is.Mint(claims(is, clk.Now(), nil))

	results := make(chan error, 2)
	ctxs := make([]context.CancelFunc, 2)
	for i := range ctxs {
		ctx, cancel := context.WithCancel(context.Background())
		ctxs[i] = cancel
		go func() {
			_, err := v.Verify(ctx, tok)
			results <- err
		}()
	}
	<-entered // the metadata fetch is stalled in the issuer
	for _, cancel := range ctxs {
		cancel()
	}
	for range ctxs {
		select {
		case err := <-results:
			wantCode(t, err, oauth.CodeUnavailable, "gave up waiting")
		case <-time.After(10 * time.Second):
			t.Fatal("a request whose caller gave up still waits for the stalled metadata fetch")
		}
	}
	if n := is.MetadataFetches.Load(); n != 1 {
		t.Fatalf("%d metadata fetches, want 1", n)
	}
}

// A kid-less token from an issuer with one key still verifies (the bound
// on the keys it is checked against, TestKidlessTokenChecksFewKeys, keeps
// the common case working).
func TestKidlessToken(t *testing.T) {
	is, v, clk := setup(t)
	first := *is.Key("key-1")
	first.KeyID = ""
	if _, err := v.Verify(context.Background(), oauthtest.MintWith(&first, claims(is, clk.Now(), nil))); err != nil {
		t.Fatalf("a kid-less token signed by the only key: %v", err)
	}
}
