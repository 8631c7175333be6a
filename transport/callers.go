package transport

import "sync"

// callerLimit caps calls in flight per caller, so one agent cannot take
// every slot of a shared server. A tools/call over the cap is refused at
// once (rate_limited), never queued; a plan's step waits for a place
// (take).
type callerLimit struct {
	max int // 0: no cap

	mu    sync.Mutex
	n     map[string]int
	freed chan struct{} // closed (and replaced) when any place frees; nil when nobody waits
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
	if c.freed != nil {
		close(c.freed)
		c.freed = nil
	}
}

// take takes a place for caller if one is free. Otherwise it takes none
// and returns a channel that is closed when a place of any caller frees,
// for a waiter to try again.
func (c *callerLimit) take(caller string) (bool, <-chan struct{}) {
	if c.max <= 0 {
		return true, nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n[caller] < c.max {
		if c.n == nil {
			c.n = map[string]int{}
		}
		c.n[caller]++
		return true, nil
	}
	if c.freed == nil {
		c.freed = make(chan struct{})
	}
	return false, c.freed
}
