package storm

import (
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"sync"
	"time"
)

// upstream is an HTTP server on loopback that enforces a quota the way
// APIs do: a token bucket of Rate per second and Burst, a 429 with
// Retry-After in whole seconds (rounded up, as the header allows) beyond
// it. Refused requests cost nothing. It records every answer.
type upstream struct {
	srv   *httptest.Server
	rate  float64
	burst float64

	mu      sync.Mutex
	tokens  float64
	last    time.Time
	start   time.Time
	answers []answer
}

type answer struct {
	at     time.Duration // since start
	status int
}

func newUpstream(rate, burst int) *upstream {
	u := &upstream{rate: float64(rate), burst: float64(burst), tokens: float64(burst), last: time.Now(), start: time.Now()}
	u.srv = httptest.NewServer(http.HandlerFunc(u.serve))
	return u
}

func (u *upstream) serve(w http.ResponseWriter, _ *http.Request) {
	u.mu.Lock()
	now := time.Now()
	u.tokens = math.Min(u.burst, u.tokens+now.Sub(u.last).Seconds()*u.rate)
	u.last = now
	status := http.StatusOK
	var retry int
	if u.tokens >= 1 {
		u.tokens--
	} else {
		status = http.StatusTooManyRequests
		retry = int(math.Ceil((1 - u.tokens) / u.rate))
	}
	u.answers = append(u.answers, answer{at: now.Sub(u.start), status: status})
	u.mu.Unlock()
	if status != http.StatusOK {
		w.Header().Set("Retry-After", fmt.Sprint(max(retry, 1)))
		w.WriteHeader(status)
		fmt.Fprintln(w, "rate limit exceeded")
		return
	}
	fmt.Fprintln(w, "ok")
}

// reset starts the clock and the record again (after warm-up).
func (u *upstream) reset() {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.start, u.last, u.tokens, u.answers = time.Now(), time.Now(), u.burst, nil
}

func (u *upstream) record() []answer {
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([]answer(nil), u.answers...)
}

func (u *upstream) close() { u.srv.Close() }
