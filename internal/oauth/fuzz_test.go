package oauth_test

import (
	"context"
	"errors"
	"testing"

	"github.com/toolhost/toolhost/internal/oauth"
)

// FuzzVerify: whatever a client sends as a bearer token, Verify returns
// token info or an *oauth.Error, and never panics.
func FuzzVerify(f *testing.F) {
	is, v, clk := setup(f)
	f.Add(is.Mint(claims(is, clk.Now(), nil)))
	f.Add(is.Mint(claims(is, clk.Now(), map[string]any{"aud": []any{1, 2}, "exp": "soon", "scope": 7})))
	f.Add("eyJhbGciOiJub25lIn0.e30.")
	f.Add("eyJ.eyJ.eyJ")
	f.Add("not-a-jwt")
	f.Fuzz(func(t *testing.T, token string) {
		ti, err := v.Verify(context.Background(), token)
		var e *oauth.Error
		if err != nil && !errors.As(err, &e) {
			t.Fatalf("error %T: %v", err, err)
		}
		if err == nil && ti.UserID == "" {
			t.Fatal("accepted a token without an identity")
		}
	})
}
