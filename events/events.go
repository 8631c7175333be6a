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
	// Caller is the identity whose call the event is about; empty for
	// events about the server itself (breaker.state, governor.state) and
	// for calls of an unauthenticated server. A subscriber scoped to an
	// identity sees only that identity's events and the server's.
	Caller string `json:"caller,omitempty"`
	Data   any    `json:"data"`
}

// Redactor is implemented by payloads that can carry values a caller sent
// or a tool returned (arguments, results). Unless the bus was created with
// Options.Values, the bus publishes and logs Redacted() in their place:
// such values may hold secrets.
type Redactor interface {
	// Redacted returns a copy without argument and result values. It
	// must not modify the receiver.
	Redacted() any
}

// Options configure a Bus. The zero value logs nothing and redacts values.
type Options struct {
	// Logger receives every event at Info; nil means no logging.
	Logger *slog.Logger
	// Values keeps argument and result values in events (payloads that
	// implement Redactor are published as they are); false publishes
	// their Redacted form, to subscribers and to the log alike.
	Values bool
}

// Bus fans events out. The zero value is not usable; call New or NewBus. It
// is safe for concurrent use. Publishing never blocks: a subscriber that
// falls behind its buffer loses events, and its Dropped count says how
// many.
//
// Publishing costs one channel send per subscriber that wants the event's
// type (one call per observer: Observe), whatever the number of prefixes:
// the bus keeps, per event type it has seen, the list of subscribers whose
// prefixes match it, and updates those lists when a subscriber comes or
// goes (see index.go).
type Bus struct {
	logger *slog.Logger
	values bool
	seq    atomic.Uint64
	nsubs  atomic.Int32

	mu  sync.Mutex
	idx index

	streamsDone chan struct{} // closed by CloseStreams
	closeOnce   sync.Once
}

// New returns a bus configured by opts.
func New(opts Options) *Bus {
	return &Bus{logger: opts.Logger, values: opts.Values, idx: newIndex(), streamsDone: make(chan struct{})}
}

// NewBus returns a bus that also writes every event to logger at Info
// (nil: no logging), with values redacted (New(Options{Logger: logger})).
func NewBus(logger *slog.Logger) *Bus {
	return New(Options{Logger: logger})
}

// Enabled reports whether anyone would see an event. Publishers check it
// first so that building an event costs nothing when no one listens.
func (b *Bus) Enabled() bool {
	if b == nil {
		return false
	}
	return b.nsubs.Load() > 0 || (b.logger != nil && b.logger.Enabled(context.Background(), slog.LevelInfo))
}

// Publish numbers an event of type typ about the server (no caller) and
// delivers it.
func (b *Bus) Publish(typ string, data any) { b.PublishFor("", typ, data) }

// PublishFor numbers an event of type typ about a call by caller and
// delivers it: to the log, to unscoped subscribers, and to subscribers
// scoped to caller.
func (b *Bus) PublishFor(caller, typ string, data any) {
	if !b.Enabled() {
		return
	}
	if r, ok := data.(Redactor); ok && !b.values {
		data = r.Redacted()
	}
	var e Event
	if b.nsubs.Load() == 0 {
		e = Event{Seq: b.seq.Add(1), Time: time.Now(), Type: typ, Caller: caller, Data: data}
	} else {
		e = b.deliver(caller, typ, data)
	}
	if b.logger != nil {
		attrs := []slog.Attr{slog.Uint64("seq", e.Seq), slog.Any("data", data)}
		if caller != "" {
			attrs = append(attrs, slog.String("caller", caller))
		}
		b.logger.LogAttrs(context.Background(), slog.LevelInfo, typ, attrs...)
	}
}

// deliver numbers an event and hands it to its subscribers and observers.
// Numbering and delivery are one step under the lock, so that concurrent
// publishers cannot reorder: every subscriber receives seqs in increasing
// order. The unlock is deferred so that an observer that panics leaves
// the bus usable.
func (b *Bus) deliver(caller, typ string, data any) Event {
	b.mu.Lock()
	defer b.mu.Unlock()
	e := Event{Seq: b.seq.Add(1), Time: time.Now(), Type: typ, Caller: caller, Data: data}
	for _, s := range b.idx.subscribers(typ) {
		switch {
		case !s.sees(caller):
		case s.observe != nil:
			s.observe(e)
		default:
			select {
			case s.ch <- e:
			default:
				s.dropped.Add(1)
			}
		}
	}
	return e
}

// CloseSubscribers ends every current subscription (their channels close),
// so that streaming handlers return and a server can shut down.
func (b *Bus) CloseSubscribers() {
	b.mu.Lock()
	subs := b.idx.all()
	b.mu.Unlock()
	for _, s := range subs {
		s.Close()
	}
}

// CloseStreams ends every HTTP event stream (Handler), now and to come,
// so a server can shut down; in-process subscribers and observers (such
// as metrics) keep receiving the events of the calls still draining. It
// may be called more than once.
func (b *Bus) CloseStreams() {
	b.closeOnce.Do(func() { close(b.streamsDone) })
}
