package oauth_test

import (
	"context"
	"testing"
)

// BenchmarkVerifyJWT is the cost a request with an ES256 access token adds
// once the keys are cached: parse, signature, claims.
func BenchmarkVerifyJWT(b *testing.B) {
	is, v, clk := setup(b)
	tok := is.Mint(claims(is, clk.Now(), nil))
	if _, err := v.Verify(context.Background(), tok); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := v.Verify(context.Background(), tok); err != nil {
			b.Fatal(err)
		}
	}
}
