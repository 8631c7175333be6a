package config

import "testing"

// TestHTTPDocExample keeps the [http] example of docs/CONFIG.md valid and
// saying what its comment says; a negative or non-integer cap is refused.
func TestHTTPDocExample(t *testing.T) {
	blocks := configDocExamples(t, "http")
	if len(blocks) != 1 {
		t.Fatalf("found %d http examples in docs/CONFIG.md, want 1", len(blocks))
	}
	c, err := Parse("CONFIG.md", blocks[0][1])
	if err != nil {
		t.Fatal(err)
	}
	if n := c.HTTP.MaxConnsPerPeer; n == nil || *n != 256 {
		t.Errorf("HTTP = %+v", c.HTTP)
	}
	wantLineError(t, "[http]\nmax_conns_per_peer = -1\n", 2, "must be 0 (no bound) or more, not -1")
	wantLineError(t, "[http]\nmax_conns = 3\n", 2, `unknown key "max_conns" in [http]`)
}
