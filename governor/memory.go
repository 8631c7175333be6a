package governor

import (
	"context"
	"sync"
	"time"
)

// Memory is the in-process Store: every quota's pool as a GCRA (generic
// cell rate algorithm) theoretical arrival time, its usage in a ring of
// buckets, and its blocked_until. Its clock is time.Now. It is safe for
// concurrent use; the zero value is ready.
type Memory struct {
	mu    sync.Mutex
	pools map[string]*memPool
}

// usageBuckets is how finely Memory measures usage over the window: a
// window of 10 s is counted in 200 ms buckets.
const usageBuckets = 50

type memPool struct {
	// tat is the theoretical arrival time: the pool holds
	// Burst - (tat-now)/Emission tokens, and is full when tat <= now.
	tat          time.Time
	blockedUntil time.Time
	buckets      [usageBuckets]bucket
	// agents is each agent's usage, in buckets as the quota's; at most
	// Limit.Agents names plus OtherAgent (see agent).
	agents map[string]*[usageBuckets]bucket
}

type bucket struct {
	index int64 // now.UnixNano() / bucket width
	used  int64
}

// NewMemory returns an empty in-memory store.
func NewMemory() *Memory { return &Memory{} }

func (m *Memory) pool(quota string) *memPool {
	if m.pools == nil {
		m.pools = make(map[string]*memPool)
	}
	p, ok := m.pools[quota]
	if !ok {
		p = &memPool{}
		m.pools[quota] = p
	}
	return p
}

// Take implements Store.
func (m *Memory) Take(_ context.Context, quota string, l Limit, d Draw) (Result, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := time.Now()
	p := m.pool(quota)
	T := l.Emission()
	tat := later(p.tat, now)
	next := tat.Add(time.Duration(d.Cost) * T)
	// The draw fits if the pool, after it, still holds Reserve tokens:
	// next - now <= (Burst - Reserve) * T.
	limit := time.Duration(l.Burst-d.Reserve) * T
	over := next.Sub(now) - limit
	if over <= 0 && !now.Before(p.blockedUntil) {
		p.tat = next
		p.record(now, l, d.Cost, p.agent(now, l, d.Agent, true))
		return p.result(now, l, true, 0), nil
	}
	wait := max(over, p.blockedUntil.Sub(now), 0)
	return p.result(now, l, false, wait), nil
}

// Block implements Store.
func (m *Memory) Block(_ context.Context, quota string, l Limit, dur time.Duration) (Result, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := time.Now()
	p := m.pool(quota)
	until := now.Add(dur)
	if until.After(p.blockedUntil) {
		p.blockedUntil = until
	}
	// Empty the pool at blockedUntil: it then holds one token, and the
	// next comes one emission interval later.
	T := l.Emission()
	p.tat = later(p.tat, p.blockedUntil.Add(time.Duration(l.Burst-1)*T))
	return p.result(now, l, false, 0), nil
}

// Refund implements Store. The usage window forgets the tokens in its
// current bucket, which is the draw's bucket unless the draw waited across
// a bucket boundary; either way the window's sum is right until the draw's
// bucket ages out.
func (m *Memory) Refund(_ context.Context, quota string, l Limit, cost int64, agent string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := time.Now()
	p := m.pool(quota)
	p.tat = later(p.tat.Add(-time.Duration(cost)*l.Emission()), now)
	p.record(now, l, -cost, p.agent(now, l, agent, false))
	return nil
}

// Peek implements Store.
func (m *Memory) Peek(_ context.Context, quota string, l Limit) (Result, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := time.Now()
	p := m.pool(quota)
	r := p.result(now, l, false, 0)
	r.Agents = make(map[string]int64, len(p.agents))
	for name, ring := range p.agents {
		if n := sumWindow(ring, now, l); n != 0 {
			r.Agents[name] = n
		}
	}
	return r, nil
}

func (p *memPool) result(now time.Time, l Limit, granted bool, wait time.Duration) Result {
	T := l.Emission()
	avail := float64(l.Burst)
	if p.tat.After(now) {
		avail -= float64(p.tat.Sub(now)) / float64(T)
	}
	return Result{Granted: granted, Wait: wait, Available: max(avail, 0), Used: p.used(now, l),
		Blocked: max(p.blockedUntil.Sub(now), 0), Now: now}
}

func bucketWidth(l Limit) int64 { return max(int64(l.Window)/usageBuckets, 1) }

// record counts cost in the quota's window and in the agent's ring.
func (p *memPool) record(now time.Time, l Limit, cost int64, agent *[usageBuckets]bucket) {
	add(&p.buckets, now, l, cost)
	add(agent, now, l, cost)
}

func add(ring *[usageBuckets]bucket, now time.Time, l Limit, cost int64) {
	idx := now.UnixNano() / bucketWidth(l)
	b := &ring[idx%usageBuckets]
	if b.index != idx {
		*b = bucket{index: idx}
	}
	b.used += cost
}

// agent returns the ring that counts name's draws. A name not counted yet
// gets a ring of its own while fewer than l.Agents others drew in the
// window (agents whose draws all aged out are forgotten first), else
// OtherAgent's; so the map never holds more than l.Agents+1 rings. A
// refund (create false) of a name not counted goes to OtherAgent, where
// its draw went.
func (p *memPool) agent(now time.Time, l Limit, name string, create bool) *[usageBuckets]bucket {
	if ring, ok := p.agents[name]; ok {
		return ring
	}
	if p.agents == nil {
		p.agents = make(map[string]*[usageBuckets]bucket)
	}
	if create && p.named() >= l.Agents {
		for n, ring := range p.agents {
			if n != OtherAgent && !active(ring, now, l) {
				delete(p.agents, n)
			}
		}
	}
	if !create || p.named() >= l.Agents {
		name = OtherAgent
		if ring, ok := p.agents[name]; ok {
			return ring
		}
	}
	ring := new([usageBuckets]bucket)
	p.agents[name] = ring
	return ring
}

// named is how many rings belong to agents by name.
func (p *memPool) named() int {
	if _, ok := p.agents[OtherAgent]; ok {
		return len(p.agents) - 1
	}
	return len(p.agents)
}

// used sums the buckets inside the window ending now.
func (p *memPool) used(now time.Time, l Limit) int64 { return sumWindow(&p.buckets, now, l) }

func sumWindow(ring *[usageBuckets]bucket, now time.Time, l Limit) int64 {
	cur := now.UnixNano() / bucketWidth(l)
	var sum int64
	for _, b := range ring {
		if b.index > cur-usageBuckets && b.index <= cur {
			sum += b.used
		}
	}
	return sum
}

// active says whether any of ring's draws is still inside the window.
func active(ring *[usageBuckets]bucket, now time.Time, l Limit) bool {
	cur := now.UnixNano() / bucketWidth(l)
	for _, b := range ring {
		if b.index > cur-usageBuckets && b.index <= cur && b.used != 0 {
			return true
		}
	}
	return false
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}
