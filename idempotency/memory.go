package idempotency

import (
	"context"
	"sync"
	"time"
)

// DefaultTTL is how long a completed outcome is replayed.
const DefaultTTL = 60 * time.Second

// entryOverhead approximates an entry's bytes beyond its key, fingerprint
// and outcome (the struct, map slot, channel and queue slot), so that
// many small keys count too.
const entryOverhead = 256

// MemoryOptions configure NewMemoryWith. The zero value is usable.
type MemoryOptions struct {
	// TTL is how long a completed outcome is replayed; 0 means DefaultTTL.
	TTL time.Duration
	// Limits bound the keys and bytes held.
	Limits Limits
}

// Memory is the in-process Store. The zero value is not usable; call
// NewMemory or NewMemoryWith. It is safe for concurrent use.
//
// It holds at most Limits' keys and bytes, in total and per caller (the
// caller is Acquire's CallerFrom(ctx)); a new key over a bound is a
// *LimitError. Kept outcomes leave when they expire, not at some later
// sweep: they wait in expiry order, and a timer set for the oldest evicts
// them even when no call comes.
type Memory struct {
	ttl    time.Duration
	limits Limits

	mu      sync.Mutex
	entries map[string]*entry
	callers map[string]*usage
	total   usage
	kept    fifo        // completed entries kept for replay, oldest first
	expiry  expiryTimer // fires when kept's oldest expires

	tasks taskTable // MCP task state (memory_tasks.go)
}

// usage is what one caller (or the store) holds.
type usage struct {
	keys  int
	bytes int64
	kept  fifo // the caller's kept entries, oldest first (callers only)
}

type entry struct {
	key         string
	caller      string
	fingerprint string
	bytes       int64
	done        chan struct{} // closed by Complete
	outcome     Outcome       // written before done is closed
	expires     time.Time     // zero while running
	waiters     int           // claims not yet released, while running
	abandoned   chan struct{} // closed when the last waiter released before done
}

// NewMemory returns a store that replays completed outcomes for ttl (0
// means DefaultTTL), within the default Limits.
func NewMemory(ttl time.Duration) *Memory {
	return NewMemoryWith(MemoryOptions{TTL: ttl})
}

// NewMemoryWith returns a store configured by opts.
func NewMemoryWith(opts MemoryOptions) *Memory {
	if opts.TTL <= 0 {
		opts.TTL = DefaultTTL
	}
	return &Memory{ttl: opts.TTL, limits: opts.Limits.withDefaults(),
		entries: make(map[string]*entry), callers: make(map[string]*usage)}
}

// Acquire implements Store.
func (m *Memory) Acquire(ctx context.Context, key, fingerprint string) (Claim, error) {
	now := time.Now()
	caller := CallerFrom(ctx)
	m.mu.Lock()
	defer m.mu.Unlock()
	m.evict(now)
	if e, ok := m.entries[key]; ok {
		if e.fingerprint != fingerprint {
			return nil, &ConflictError{Key: key}
		}
		e.waiters++
		return &follower{m: m, e: e}, nil
	}
	e := &entry{key: key, caller: caller, fingerprint: fingerprint, done: make(chan struct{}),
		bytes: int64(len(key)+len(fingerprint)) + entryOverhead, waiters: 1, abandoned: make(chan struct{})}
	if err := m.admit(e, now); err != nil {
		return nil, err
	}
	m.entries[key] = e
	m.charge(e, 1, e.bytes)
	return &leader{follower: follower{m: m, e: e}}, nil
}

// Len returns the number of keys held (running or kept), for tests and
// metrics.
func (m *Memory) Len() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.entries)
}

// Usage returns the keys and bytes caller holds, for tests and metrics.
func (m *Memory) Usage(caller string) (keys int, bytes int64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if u := m.callers[caller]; u != nil {
		return u.keys, u.bytes
	}
	return 0, 0
}

// admit checks a new entry against the limits: per caller first, so that
// a caller over its own bound hears about its own bound.
func (m *Memory) admit(e *entry, now time.Time) error {
	u := m.callers[e.caller]
	if u == nil {
		u = &usage{}
	}
	l := m.limits
	refuse := func(limit string, held, max int64, kept *fifo) error {
		err := &LimitError{Limit: limit, Caller: e.caller, Held: held, Max: max}
		if old := kept.front(); old != nil {
			err.RetryAfter = old.expires.Sub(now)
		}
		return err
	}
	switch {
	case u.keys >= l.MaxKeysPerCaller:
		return refuse("keys per caller", int64(u.keys), int64(l.MaxKeysPerCaller), &u.kept)
	case u.bytes+e.bytes > l.MaxBytesPerCaller:
		return refuse("bytes per caller", u.bytes, l.MaxBytesPerCaller, &u.kept)
	case m.total.keys >= l.MaxKeys:
		return refuse("keys", int64(m.total.keys), int64(l.MaxKeys), &m.kept)
	case m.total.bytes+e.bytes > l.MaxBytes:
		return refuse("bytes", m.total.bytes, l.MaxBytes, &m.kept)
	}
	return nil
}

// charge adds keys and bytes to e's caller and the total (negative to
// release), forgetting a caller who holds nothing.
func (m *Memory) charge(e *entry, keys int, bytes int64) {
	u := m.callers[e.caller]
	if u == nil {
		u = &usage{}
		m.callers[e.caller] = u
	}
	u.keys += keys
	u.bytes += bytes
	m.total.keys += keys
	m.total.bytes += bytes
	if u.keys == 0 && u.kept.len() == 0 {
		delete(m.callers, e.caller)
	}
}

// keep stores a completed entry for replay until now+ttl.
func (m *Memory) keep(e *entry, o Outcome, now time.Time) {
	e.outcome = o
	e.expires = now.Add(m.ttl)
	extra := int64(len(o.Result))
	if o.Err != nil {
		extra += int64(len(o.Err.Error()))
	}
	e.bytes += extra
	m.charge(e, 0, extra)
	m.kept.push(e)
	m.callers[e.caller].kept.push(e)
	m.arm(now)
}

// evict drops the kept entries that have expired at now. They are in
// expiry order (one TTL for all, completions in order under the lock), so
// this costs only the entries it drops.
func (m *Memory) evict(now time.Time) {
	for e := m.kept.front(); e != nil && !now.Before(e.expires); e = m.kept.front() {
		m.kept.pop()
		u := m.callers[e.caller]
		u.kept.pop() // e is also its caller's oldest
		if m.entries[e.key] == e {
			delete(m.entries, e.key)
		}
		m.charge(e, -1, -e.bytes)
	}
}

// arm sets the timer for the oldest kept entry, so that expired outcomes
// leave memory even when no call comes to evict them.
func (m *Memory) arm(now time.Time) {
	if e := m.kept.front(); e != nil {
		m.expiry.set(e.expires, now, m.expire)
	}
}

func (m *Memory) expire() {
	now := time.Now()
	m.mu.Lock()
	defer m.mu.Unlock()
	m.expiry.fired()
	m.evict(now)
	m.arm(now)
}

// leader is the claim of the caller that runs the execution: a waiter
// like any other, plus Complete.
type leader struct {
	follower
	completeOnce sync.Once
}

func (l *leader) Leader() bool { return true }

// Abandoned implements Claim.
func (l *leader) Abandoned() <-chan struct{} { return l.e.abandoned }

// Complete stores and publishes under the store's lock, so no Acquire can
// see the key free (or running) once the outcome exists. A kept outcome is
// charged even when it takes its caller over a byte bound: the execution
// ran, and its replay must not be lost; the next new key is refused
// instead. An abandoned execution's outcome is never kept: its key was
// freed when its last waiter left.
func (l *leader) Complete(o Outcome, keep bool) {
	l.completeOnce.Do(func() {
		now := time.Now()
		l.m.mu.Lock()
		defer l.m.mu.Unlock()
		l.m.evict(now)
		if keep && !isClosed(l.e.abandoned) {
			l.m.keep(l.e, o, now)
		} else {
			l.e.outcome = o
			if l.m.entries[l.e.key] == l.e {
				delete(l.m.entries, l.e.key)
			}
			l.m.charge(l.e, -1, -l.e.bytes)
		}
		close(l.e.done)
	})
}

// follower is the claim of a caller that waits for someone else's
// execution (or replays its kept outcome).
type follower struct {
	m           *Memory
	e           *entry
	releaseOnce sync.Once
}

func (f *follower) Leader() bool { return false }

func (f *follower) Wait(ctx context.Context) (Outcome, error) {
	select {
	case <-f.e.done:
		return f.e.outcome, nil
	case <-ctx.Done():
		return Outcome{}, ctx.Err()
	}
}

func (f *follower) Complete(Outcome, bool) {
	panic("idempotency: Complete called by a caller that does not lead the execution")
}

// Abandoned implements Claim: only a leader is told.
func (f *follower) Abandoned() <-chan struct{} { return nil }

// Release implements Claim. Abandoning frees the key under the same lock
// that counts the waiters, so a caller arriving after the last one left
// never joins an execution that is being stopped. The entry stays charged
// to its caller until the leader's Complete: the execution still runs.
func (f *follower) Release() (abandoned bool) {
	f.releaseOnce.Do(func() {
		f.m.mu.Lock()
		defer f.m.mu.Unlock()
		if isClosed(f.e.done) {
			return // completed: nothing left to stop
		}
		if f.e.waiters--; f.e.waiters > 0 {
			return
		}
		abandoned = true
		close(f.e.abandoned)
		if f.m.entries[f.e.key] == f.e {
			delete(f.m.entries, f.e.key)
		}
	})
	return abandoned
}

func isClosed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// fifo is a queue of entries in expiry order.
type fifo struct {
	items []*entry
	head  int
}

func (q *fifo) len() int { return len(q.items) - q.head }

func (q *fifo) push(e *entry) { q.items = append(q.items, e) }

func (q *fifo) front() *entry {
	if q.len() == 0 {
		return nil
	}
	return q.items[q.head]
}

// pop drops the front, reclaiming the slice's consumed half now and then so
// a long-lived queue does not grow.
func (q *fifo) pop() {
	q.items[q.head] = nil
	q.head++
	switch {
	case q.head == len(q.items):
		q.items, q.head = q.items[:0], 0
	case q.head > 64 && q.head*2 > len(q.items):
		q.items = append(q.items[:0:0], q.items[q.head:]...)
		q.head = 0
	}
}
