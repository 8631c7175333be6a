package redisconn

import (
	"math"
	"testing"
	"time"
)

// Values a Redis neighbour can plant (issue 27 item 2): beyond 9.2e12 ms
// a plain multiplication wraps negative, at 2e13 ms to about 49 years.
func TestDurationRangeChecked(t *testing.T) {
	for _, tt := range []struct {
		n    int64
		unit time.Duration
		want time.Duration
	}{
		{-2, time.Millisecond, 0},
		{-1, time.Millisecond, 0},
		{0, time.Millisecond, 0},
		{1500, time.Millisecond, 1500 * time.Millisecond},
		{math.MaxInt64 / int64(time.Millisecond), time.Millisecond, time.Duration(math.MaxInt64/int64(time.Millisecond)) * time.Millisecond},
		{9_300_000_000_000, time.Millisecond, math.MaxInt64},
		{20_000_000_000_000, time.Millisecond, math.MaxInt64},
		{math.MaxInt64, time.Microsecond, math.MaxInt64},
		{math.MaxInt64, time.Nanosecond, math.MaxInt64},
	} {
		if got := Duration(tt.n, tt.unit); got != tt.want {
			t.Errorf("Duration(%d, %v) = %v, want %v", tt.n, tt.unit, got, tt.want)
		}
	}
}
