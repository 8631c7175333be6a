package oauth

import (
	"context"
	"net/netip"
	"testing"
	"time"

	"github.com/toolhost/toolhost/internal/testkit/oauthtest"
)

// Issue 27 item 5: a token without kid was checked against every key the
// issuer publishes. With 60 keys published, one signed by the first key
// verifies with one check, and one signed by a key of no one's costs at
// most MaxKeyCandidates checks, not 60.
func TestKidlessTokenChecksFewKeys(t *testing.T) {
	is := oauthtest.New(t)
	for range 59 {
		is.Rotate()
	}
	v, err := New(Config{Issuer: is.URL, Resource: "https://tools.example.com/mcp",
		AllowNetworks: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	c := map[string]any{"iss": is.URL, "aud": "https://tools.example.com/mcp", "sub": "alice",
		"iat": now.Unix(), "exp": now.Add(time.Minute).Unix()}
	if err := v.Discover(context.Background()); err != nil {
		t.Fatal(err)
	}

	first := *is.Key("key-1")
	first.KeyID = ""
	if _, err := v.Verify(context.Background(), oauthtest.MintWith(&first, c)); err != nil {
		t.Fatalf("kid-less token signed by the first key: %v", err)
	}
	if n := v.checks.Load(); n != 1 {
		t.Fatalf("%d signature checks for a token signed by the first key, want 1", n)
	}

	stranger := *oauthtest.New(t).Key("key-1")
	stranger.KeyID = ""
	v.checks.Store(0)
	if _, err := v.Verify(context.Background(), oauthtest.MintWith(&stranger, c)); err == nil {
		t.Fatal("a token signed by an unpublished key verified")
	}
	if n := v.checks.Load(); n > MaxKeyCandidates {
		t.Fatalf("%d signature checks for one kid-less token against 60 keys, want at most %d", n, MaxKeyCandidates)
	}
}
