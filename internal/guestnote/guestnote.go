// Package guestnote carries a tool's progress and log messages (the
// toolhost_v1 progress and log host functions, abi.ImportProgress and
// abi.ImportLog) from the guest to whoever made the call.
//
// The transport knows the caller (its MCP session, the request's progress
// token, the log level it set) and puts a Sink in the call's context; the
// host knows the guest, and for each call it runs makes a Call from that
// Sink, which the host functions feed. The Call enforces the limits (rate,
// size, count), repairs or drops what a hostile guest sends, logs every
// accepted message on the server, and hands the rest to the Sink. Neither
// side imports the other: this package is the one thing they share, as
// internal/attempt is for the dispatcher and the host.
package guestnote

import (
	"context"
	"time"

	"github.com/toolhost/toolhost/abi"
)

// Sink receives the notes of one tool call that the host accepted: their
// arguments are checked, their messages valid UTF-8 and within the size
// limits, and progress is rate-limited and strictly increasing within one
// attempt. Its methods are called one at a time, from the goroutine running
// the call, while the call runs (never after the call has returned); they
// should not block for long, since the guest waits for them.
type Sink interface {
	// Progress reports that done of total units are done; total 0 means
	// the total is unknown. msg may be empty.
	Progress(done, total float64, msg string)
	// Log reports one message; level is Valid.
	Log(level abi.LogLevel, msg string)
}

type sinkKey struct{}

// WithSink returns ctx carrying s for the calls made with it.
func WithSink(ctx context.Context, s Sink) context.Context {
	return context.WithValue(ctx, sinkKey{}, s)
}

// SinkFrom returns the Sink ctx carries, or nil.
func SinkFrom(ctx context.Context) Sink {
	s, _ := ctx.Value(sinkKey{}).(Sink)
	return s
}

type callKey struct{}

// WithCall returns ctx carrying c, for the host functions.
func WithCall(ctx context.Context, c *Call) context.Context {
	return context.WithValue(ctx, callKey{}, c)
}

// CallFrom returns the Call ctx carries, or nil (outside a tool call: at
// load, in _initialize and toolhost_describe).
func CallFrom(ctx context.Context) *Call {
	c, _ := ctx.Value(callKey{}).(*Call)
	return c
}

// Limits bounds one call's notes. Zero fields take the defaults.
type Limits struct {
	// ProgressInterval is the least time between two progress
	// notifications sent; one that comes sooner is held, replaced by any
	// later one, and sent when the next one comes after the interval or
	// when the call ends. 0 means 100 ms (at most 10 a second).
	ProgressInterval time.Duration
	// ProgressBytes caps a progress message; 0 means 1 KiB.
	ProgressBytes int
	// LogBytes caps one log message; 0 means 4 KiB.
	LogBytes int
	// LogCount caps the log messages of one call; 0 means 100.
	LogCount int
	// LogTotalBytes caps the bytes of all log messages of one call; 0
	// means 64 KiB.
	LogTotalBytes int
}

// Defaults for Limits fields left at zero.
const (
	DefaultProgressInterval = 100 * time.Millisecond
	DefaultProgressBytes    = 1 << 10
	DefaultLogBytes         = 4 << 10
	DefaultLogCount         = 100
	DefaultLogTotalBytes    = 64 << 10
)

func (l Limits) withDefaults() Limits {
	if l.ProgressInterval <= 0 {
		l.ProgressInterval = DefaultProgressInterval
	}
	if l.ProgressBytes <= 0 {
		l.ProgressBytes = DefaultProgressBytes
	}
	if l.LogBytes <= 0 {
		l.LogBytes = DefaultLogBytes
	}
	if l.LogCount <= 0 {
		l.LogCount = DefaultLogCount
	}
	if l.LogTotalBytes <= 0 {
		l.LogTotalBytes = DefaultLogTotalBytes
	}
	return l
}
