package events

import (
	"strings"
	"sync"
	"sync/atomic"
)

// Filter selects the events a subscription receives. The zero value
// receives every event.
type Filter struct {
	// Prefixes keeps only events whose type starts with one of them; none
	// (or an empty one) means every type.
	Prefixes []string
	// Scoped limits the subscription to the events of Caller's calls and
	// the server's own events (those without a caller). Unscoped
	// subscriptions see every caller's events: in-process consumers such
	// as metrics, operators, and the single user of a server without
	// authentication.
	Scoped bool
	// Caller is the identity a Scoped subscription follows.
	Caller string
}

// Subscription receives events on C until Close.
type Subscription struct {
	// C delivers events in publication order.
	C <-chan Event

	ch      chan Event
	bus     *Bus
	filter  Filter
	dropped atomic.Uint64
	once    sync.Once
}

// Subscribe returns a subscription with a buffer of buf events (0 means
// 256) receiving events whose type starts with one of prefixes (none: all).
func (b *Bus) Subscribe(buf int, prefixes ...string) *Subscription {
	return b.SubscribeFilter(buf, Filter{Prefixes: prefixes})
}

// SubscribeFilter returns a subscription with a buffer of buf events (0
// means 256) receiving the events f selects. Its prefixes are matched here,
// against the event types the bus has seen, and once per new type at its
// first publication; never per event.
func (b *Bus) SubscribeFilter(buf int, f Filter) *Subscription {
	if buf <= 0 {
		buf = 256
	}
	f.Prefixes = normalise(f.Prefixes)
	ch := make(chan Event, buf)
	s := &Subscription{C: ch, ch: ch, bus: b, filter: f}
	b.mu.Lock()
	b.idx.add(s)
	b.nsubs.Add(1)
	b.mu.Unlock()
	return s
}

// normalise drops duplicate prefixes and, when one is empty (it matches
// everything), all of them.
func normalise(prefixes []string) []string {
	var out []string
	seen := make(map[string]bool, len(prefixes))
	for _, p := range prefixes {
		if p == "" {
			return nil
		}
		if !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	return out
}

// Close stops delivery and closes C. It may be called more than once.
func (s *Subscription) Close() {
	s.once.Do(func() {
		s.bus.mu.Lock()
		s.bus.idx.remove(s)
		s.bus.nsubs.Add(-1)
		s.bus.mu.Unlock()
		close(s.ch)
	})
}

// Dropped returns how many events this subscriber missed because its
// buffer was full.
func (s *Subscription) Dropped() uint64 { return s.dropped.Load() }

// match reports whether the subscription wants events of type typ.
func (s *Subscription) match(typ string) bool {
	if len(s.filter.Prefixes) == 0 {
		return true
	}
	for _, p := range s.filter.Prefixes {
		if strings.HasPrefix(typ, p) {
			return true
		}
	}
	return false
}

// sees reports whether the subscription may receive an event about
// caller's call.
func (s *Subscription) sees(caller string) bool {
	return !s.filter.Scoped || caller == "" || caller == s.filter.Caller
}
