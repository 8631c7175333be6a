// Package events is toolhost's structured event stream: the dispatcher (and
// later the governor and plan executor) publish typed events; the bus
// numbers them, writes them to the structured log, and fans them out to
// subscribers, in process or over HTTP (Server-Sent Events).
package events

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"
)

// Event is one entry of the stream. Data is a typed payload whose shape
// depends on Type (the dispatcher's are in package dispatcher).
type Event struct {
	Seq  uint64    `json:"seq"`
	Time time.Time `json:"time"`
	Type string    `json:"type"`
	Data any       `json:"data"`
}

// Bus fans events out. The zero value is not usable; call NewBus. It is safe
// for concurrent use. Publishing never blocks: a subscriber that falls
// behind its buffer loses events, and its Dropped count says how many.
type Bus struct {
	logger *slog.Logger
	seq    atomic.Uint64
	nsubs  atomic.Int32

	mu   sync.RWMutex
	subs map[*Subscription]struct{}

	streamsDone chan struct{} // closed by CloseStreams
	closeOnce   sync.Once
}

// NewBus returns a bus that also writes every event to logger at Info
// (nil: no logging).
func NewBus(logger *slog.Logger) *Bus {
	return &Bus{logger: logger, subs: make(map[*Subscription]struct{}), streamsDone: make(chan struct{})}
}

// Enabled reports whether anyone would see an event. Publishers check it
// first so that building an event costs nothing when no one listens.
func (b *Bus) Enabled() bool {
	if b == nil {
		return false
	}
	return b.nsubs.Load() > 0 || (b.logger != nil && b.logger.Enabled(context.Background(), slog.LevelInfo))
}

// Publish numbers an event of type typ and delivers it.
func (b *Bus) Publish(typ string, data any) {
	if !b.Enabled() {
		return
	}
	var e Event
	if b.nsubs.Load() == 0 {
		e = Event{Seq: b.seq.Add(1), Time: time.Now(), Type: typ, Data: data}
	} else {
		// Numbering and delivery are one step under the write lock, so
		// that concurrent publishers cannot reorder: every subscriber
		// receives seqs in increasing order.
		b.mu.Lock()
		e = Event{Seq: b.seq.Add(1), Time: time.Now(), Type: typ, Data: data}
		for s := range b.subs {
			if s.match(typ) {
				select {
				case s.ch <- e:
				default:
					s.dropped.Add(1)
				}
			}
		}
		b.mu.Unlock()
	}
	if b.logger != nil {
		b.logger.LogAttrs(context.Background(), slog.LevelInfo, typ, slog.Uint64("seq", e.Seq), slog.Any("data", data))
	}
}

// Subscription receives events on C until Close.
type Subscription struct {
	// C delivers events in publication order.
	C <-chan Event

	ch       chan Event
	bus      *Bus
	prefixes []string
	dropped  atomic.Uint64
	once     sync.Once
}

// Subscribe returns a subscription with a buffer of buf events (0 means
// 256) receiving events whose type starts with one of prefixes (none: all).
func (b *Bus) Subscribe(buf int, prefixes ...string) *Subscription {
	if buf <= 0 {
		buf = 256
	}
	ch := make(chan Event, buf)
	s := &Subscription{C: ch, ch: ch, bus: b, prefixes: prefixes}
	b.mu.Lock()
	b.subs[s] = struct{}{}
	b.nsubs.Add(1)
	b.mu.Unlock()
	return s
}

// Close stops delivery and closes C. It may be called more than once.
func (s *Subscription) Close() {
	s.once.Do(func() {
		s.bus.mu.Lock()
		delete(s.bus.subs, s)
		s.bus.nsubs.Add(-1)
		s.bus.mu.Unlock()
		close(s.ch)
	})
}

// Dropped returns how many events this subscriber missed because its
// buffer was full.
func (s *Subscription) Dropped() uint64 { return s.dropped.Load() }

func (s *Subscription) match(typ string) bool {
	if len(s.prefixes) == 0 {
		return true
	}
	for _, p := range s.prefixes {
		if len(typ) >= len(p) && typ[:len(p)] == p {
			return true
		}
	}
	return false
}

// CloseSubscribers ends every current subscription (their channels close),
// so that streaming handlers return and a server can shut down.
func (b *Bus) CloseSubscribers() {
	b.mu.RLock()
	subs := make([]*Subscription, 0, len(b.subs))
	for s := range b.subs {
		subs = append(subs, s)
	}
	b.mu.RUnlock()
	for _, s := range subs {
		s.Close()
	}
}

// CloseStreams ends every HTTP event stream (Handler), now and to come,
// so a server can shut down; in-process subscribers such as metrics keep
// receiving the events of the calls still draining. It may be called more
// than once.
func (b *Bus) CloseStreams() {
	b.closeOnce.Do(func() { close(b.streamsDone) })
}
