package transport

import "sync"

// callerLimit caps calls in flight per caller, so one agent cannot take
// every slot of a shared server. A call over the cap is refused at once
// (rate_limited), never queued.
type callerLimit struct {
	max int // 0: no cap

	mu sync.Mutex
	n  map[string]int
}

func (c *callerLimit) enter(caller string) bool {
	if c.max <= 0 {
		return true
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n[caller] >= c.max {
		return false
	}
	if c.n == nil {
		c.n = map[string]int{}
	}
	c.n[caller]++
	return true
}

func (c *callerLimit) exit(caller string) {
	if c.max <= 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n[caller]--; c.n[caller] <= 0 {
		delete(c.n, caller)
	}
}
