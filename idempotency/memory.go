package idempotency

import (
	"context"
	"sync"
	"time"
)

// DefaultTTL is how long a completed outcome is replayed.
const DefaultTTL = 60 * time.Second

// Memory is the in-process Store. The zero value is not usable; call
// NewMemory. It is safe for concurrent use.
type Memory struct {
	ttl time.Duration

	mu        sync.Mutex
	entries   map[string]*entry
	lastSweep time.Time
}

type entry struct {
	key         string
	fingerprint string
	done        chan struct{} // closed by Complete
	outcome     Outcome       // written before done is closed
	expires     time.Time     // zero while running
}

// NewMemory returns a store that replays completed outcomes for ttl (0
// means DefaultTTL).
func NewMemory(ttl time.Duration) *Memory {
	if ttl <= 0 {
		ttl = DefaultTTL
	}
	return &Memory{ttl: ttl, entries: make(map[string]*entry), lastSweep: time.Now()}
}

// Acquire implements Store.
func (m *Memory) Acquire(_ context.Context, key, fingerprint string) (Claim, error) {
	now := time.Now()
	m.mu.Lock()
	defer m.mu.Unlock()
	m.sweep(now)
	if e, ok := m.entries[key]; ok && !e.expired(now) {
		if e.fingerprint != fingerprint {
			return nil, &ConflictError{Key: key}
		}
		return follower{e}, nil
	}
	e := &entry{key: key, fingerprint: fingerprint, done: make(chan struct{})}
	m.entries[key] = e
	return &leader{m: m, e: e}, nil
}

// Len returns the number of keys held (running or kept), for tests and
// metrics.
func (m *Memory) Len() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.entries)
}

func (e *entry) expired(now time.Time) bool {
	return !e.expires.IsZero() && !now.Before(e.expires)
}

// sweep drops expired entries at most twice per TTL, so the cost is
// amortised over many Acquires and memory stays bounded by the keys of the
// last TTL or so.
func (m *Memory) sweep(now time.Time) {
	if now.Sub(m.lastSweep) < m.ttl/2 {
		return
	}
	m.lastSweep = now
	for k, e := range m.entries {
		if e.expired(now) {
			delete(m.entries, k)
		}
	}
}

type leader struct {
	m    *Memory
	e    *entry
	once sync.Once
}

func (l *leader) Leader() bool { return true }

func (l *leader) Wait(ctx context.Context) (Outcome, error) { return follower{l.e}.Wait(ctx) }

// Complete stores and publishes under the store's lock, so no Acquire can
// see the key free (or running) once the outcome exists.
func (l *leader) Complete(o Outcome, keep bool) {
	l.once.Do(func() {
		l.m.mu.Lock()
		l.e.outcome = o
		if keep {
			l.e.expires = time.Now().Add(l.m.ttl)
		} else if l.m.entries[l.e.key] == l.e {
			delete(l.m.entries, l.e.key)
		}
		close(l.e.done)
		l.m.mu.Unlock()
	})
}

type follower struct{ e *entry }

func (f follower) Leader() bool { return false }

func (f follower) Wait(ctx context.Context) (Outcome, error) {
	select {
	case <-f.e.done:
		return f.e.outcome, nil
	case <-ctx.Done():
		return Outcome{}, ctx.Err()
	}
}

func (f follower) Complete(Outcome, bool) {
	panic("idempotency: Complete called by a caller that does not lead the execution")
}
