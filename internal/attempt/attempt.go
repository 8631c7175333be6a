// Package attempt lets the layer that runs guest code tell the dispatcher
// how much of an attempt the guest itself used: the dispatcher attaches a
// *Stats to the attempt's context, the host adds the time spent inside the
// guest's toolhost_call to it. A timeout whose guest time is well under
// the attempt's timeout was spent by the host (waiting for CPU,
// instantiating under load): it says nothing of the tool's health, and
// the dispatcher does not count it against the tool's breaker.
//
// The dispatcher knows time, the host knows WebAssembly; this package is
// the one fact they share, so neither imports the other.
package attempt

import (
	"context"
	"sync/atomic"
	"time"
)

// Stats is one attempt's account. It is safe for concurrent use; the zero
// value is an attempt no module has run yet.
type Stats struct {
	guest   atomic.Int64 // nanoseconds inside guest code
	entered atomic.Bool  // a module started on the attempt
}

type key struct{}

// With returns ctx carrying a fresh Stats, and the Stats.
func With(ctx context.Context) (context.Context, *Stats) {
	c := &statsCtx{Context: ctx}
	return c, &c.stats
}

// statsCtx is a context carrying its attempt's Stats: one allocation per
// attempt where context.WithValue and a separate Stats made two (every
// dispatch pays it). Everything but the Stats' key goes to the parent, so
// the context package still finds the parent's cancellation (a context
// derived from this one starts no goroutine to watch it).
type statsCtx struct {
	context.Context
	stats Stats
}

// Value returns the Stats for their key, else the parent's value.
func (c *statsCtx) Value(k any) any {
	if k == (key{}) {
		return &c.stats
	}
	return c.Context.Value(k)
}

// From returns the Stats ctx carries, or nil.
func From(ctx context.Context) *Stats {
	s, _ := ctx.Value(key{}).(*Stats)
	return s
}

// Enter records that a module started on the attempt. Nil-safe.
func (s *Stats) Enter() {
	if s != nil {
		s.entered.Store(true)
	}
}

// AddGuest adds d of time spent inside guest code. Nil-safe.
func (s *Stats) AddGuest(d time.Duration) {
	if s != nil {
		s.guest.Add(int64(d))
	}
}

// Guest returns the time spent inside guest code, and whether a module
// ran on the attempt at all (false: the handler is not a module, and
// nothing is known).
func (s *Stats) Guest() (time.Duration, bool) {
	if s == nil {
		return 0, false
	}
	return time.Duration(s.guest.Load()), s.entered.Load()
}
