package idempotency

import (
	"context"
	"errors"
)

// ErrUnavailable matches a store that cannot answer now (Redis
// unreachable or slow): the key's state is unknown, so the call must not
// run; the caller may try again. The dispatcher reports it as transient.
var ErrUnavailable = errors.New("idempotency store unavailable")

// ErrorCodec turns an Outcome's Err into bytes and back, for stores that
// keep outcomes outside the process. Decode must give back an error of the
// type Encode was given, so that every replica replays the same envelope.
type ErrorCodec interface {
	EncodeError(err error) ([]byte, error)
	DecodeError(b []byte) (error, error)
}

// Fallback is a Store that uses Primary, and Local for the keys Primary
// cannot take because it is unavailable (ErrUnavailable). It trades
// cross-replica deduplication for availability while Primary is away: a key
// may then run once on each replica. It is safe for concurrent use if its
// stores are.
type Fallback struct {
	Primary, Local Store
	// OnFallback, if set, is called for each key that went to Local.
	OnFallback func(err error)
}

// Acquire implements Store.
func (f *Fallback) Acquire(ctx context.Context, key, fingerprint string) (Claim, error) {
	c, err := f.Primary.Acquire(ctx, key, fingerprint)
	if err == nil || !errors.Is(err, ErrUnavailable) {
		return c, err
	}
	if f.OnFallback != nil {
		f.OnFallback(err)
	}
	return f.Local.Acquire(ctx, key, fingerprint)
}
