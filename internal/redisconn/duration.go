package redisconn

import (
	"math"
	"time"
)

// Duration turns n units read from Redis (a PTTL, a script's wait) into a
// Duration that is never negative and never wrapped: whoever can write
// Redis chooses n, and n × unit past time.Duration's range (292 years)
// would otherwise wrap, to the past or to decades. n ≤ 0 is 0; beyond the
// range it saturates at the largest Duration. unit must be positive.
func Duration(n int64, unit time.Duration) time.Duration {
	switch {
	case n <= 0:
		return 0
	case n > math.MaxInt64/int64(unit):
		return math.MaxInt64
	}
	return time.Duration(n) * unit
}
