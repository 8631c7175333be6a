package idempotency

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Limits bound what a store keeps: keys held (running or kept for replay)
// and their bytes (key, fingerprint and kept outcome), in total and per
// caller. Every field's zero value means its default.
type Limits struct {
	// MaxKeys caps the keys held in total; 0 means DefaultMaxKeys.
	MaxKeys int
	// MaxKeysPerCaller caps one caller's keys; 0 means
	// DefaultMaxKeysPerCaller.
	MaxKeysPerCaller int
	// MaxBytes caps the bytes held in total; 0 means DefaultMaxBytes.
	MaxBytes int64
	// MaxBytesPerCaller caps one caller's bytes; 0 means
	// DefaultMaxBytesPerCaller.
	MaxBytesPerCaller int64
}

// Defaults of Limits: room for a busy server's last minute of keyed calls,
// while one caller's 1 MB results cannot take more than 64 MiB.
const (
	DefaultMaxKeys           = 100_000
	DefaultMaxKeysPerCaller  = 10_000
	DefaultMaxBytes          = 256 << 20
	DefaultMaxBytesPerCaller = 64 << 20
)

// WithDefaults returns l with every zero field at its default, for stores
// outside this package.
func (l Limits) WithDefaults() Limits { return l.withDefaults() }

func (l Limits) withDefaults() Limits {
	if l.MaxKeys <= 0 {
		l.MaxKeys = DefaultMaxKeys
	}
	if l.MaxKeysPerCaller <= 0 {
		l.MaxKeysPerCaller = DefaultMaxKeysPerCaller
	}
	if l.MaxBytes <= 0 {
		l.MaxBytes = DefaultMaxBytes
	}
	if l.MaxBytesPerCaller <= 0 {
		l.MaxBytesPerCaller = DefaultMaxBytesPerCaller
	}
	return l
}

// LimitError refuses a new key because a bound of the store is reached.
// The caller may retry once kept outcomes expire (RetryAfter), or call
// without a key; it never silently loses its deduplication.
type LimitError struct {
	// Limit names the bound: "keys", "keys per caller", "bytes" or
	// "bytes per caller".
	Limit string
	// Caller is the caller refused.
	Caller string
	// Held and Max are the bound's use and value (keys or bytes).
	Held, Max int64
	// RetryAfter is when the oldest kept outcome under the bound expires,
	// freeing room; 0 when every key under it is still running.
	RetryAfter time.Duration
}

func (e *LimitError) Error() string {
	who := "the store holds"
	if e.Limit == "keys per caller" || e.Limit == "bytes per caller" {
		who = fmt.Sprintf("caller %q holds", e.Caller)
	}
	msg := fmt.Sprintf("idempotency store full: %s %d %s, the limit of %s is %d", who, e.Held, unit(e.Limit), e.Limit, e.Max)
	if e.RetryAfter > 0 {
		msg += fmt.Sprintf("; room frees in %v, when the oldest kept outcome expires", e.RetryAfter.Round(time.Millisecond))
	}
	return msg
}

func unit(limit string) string {
	if limit == "bytes" || limit == "bytes per caller" {
		return "bytes"
	}
	return "keys"
}

// ErrLimit matches any *LimitError with errors.Is.
var ErrLimit = errors.New("idempotency store limit")

// Is makes errors.Is(err, ErrLimit) true.
func (e *LimitError) Is(target error) bool { return target == ErrLimit }

type callerKey struct{}

// WithCaller returns ctx carrying the identity whose call Acquire claims a
// key for: stores bound keys and bytes per caller by it. A ctx without one
// is the anonymous caller "".
func WithCaller(ctx context.Context, caller string) context.Context {
	return context.WithValue(ctx, callerKey{}, caller)
}

// CallerFrom returns the caller WithCaller put in ctx, or "".
func CallerFrom(ctx context.Context) string {
	c, _ := ctx.Value(callerKey{}).(string)
	return c
}
