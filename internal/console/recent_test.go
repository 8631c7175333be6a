package console

import (
	"fmt"
	"testing"
)

// TestRecentKeepsTheLast: the ring keeps the last max rows, oldest first,
// at every fill.
func TestRecentKeepsTheLast(t *testing.T) {
	rc := newRecent(3)
	for n := 1; n <= 8; n++ {
		rc.add(callRow{Tool: fmt.Sprint(n)})
		got := ""
		for _, r := range rc.snapshot() {
			got += r.Tool
		}
		want := ""
		for i := max(1, n-2); i <= n; i++ {
			want += fmt.Sprint(i)
		}
		if got != want {
			t.Errorf("after %d rows: %q, want %q", n, got, want)
		}
	}
}
