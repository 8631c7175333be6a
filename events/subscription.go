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

// Subscription receives events on C until Close (or, made by Observe,
// hands them to a function).
type Subscription struct {
	// C delivers events in publication order; nil for an observer.
	C <-chan Event

	ch      chan Event
	observe func(Event)   // an observer's, called in PublishFor
	done    chan struct{} // closed by Close
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
	ch := make(chan Event, buf)
	return b.add(&Subscription{C: ch, ch: ch, bus: b, filter: f})
}

// Observe calls f with every event whose type starts with one of prefixes
// (none: all), until the returned subscription is closed. f runs in
// PublishFor, on the publisher's goroutine and under the bus's lock, so
// it sees events in publication order and misses none; it must be quick,
// and must neither block nor publish. It is for in-process consumers that
// only count or record (metrics, the console's recent calls), and never
// wait on a lock a slow reader holds: a
// subscription's goroutine, parked on its channel, costs every event a
// wake-up of another thread (docs/BENCHMARKS.md, "Issue 26, session 15").
func (b *Bus) Observe(f func(Event), prefixes ...string) *Subscription {
	return b.add(&Subscription{observe: f, bus: b, filter: Filter{Prefixes: prefixes}})
}

func (b *Bus) add(s *Subscription) *Subscription {
	s.filter.Prefixes = normalise(s.filter.Prefixes)
	s.done = make(chan struct{})
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

// Close stops delivery and closes C. It may be called more than once; an
// observer's function is not called once Close has returned.
func (s *Subscription) Close() {
	s.once.Do(func() {
		s.bus.mu.Lock()
		s.bus.idx.remove(s)
		s.bus.nsubs.Add(-1)
		s.bus.mu.Unlock()
		if s.ch != nil {
			close(s.ch)
		}
		close(s.done)
	})
}

// Done is closed once the subscription is closed, by Close or by the
// bus's CloseSubscribers: how an observer's owner learns that the bus
// let it go.
func (s *Subscription) Done() <-chan struct{} { return s.done }

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
