// Package redisstore is an idempotency.Store in Redis, so that replicas of
// toolhost behind a load balancer share keys: a key claimed on one replica
// is seen by all, and its outcome is replayed by all.
//
// A claim is an atomic set-if-absent of {owner, fingerprint, state,
// lease}: owner is a random fencing token, and the lease is the key's
// expiry in Redis, renewed while the execution runs. Completion is a
// script that writes only if the owner still holds the claim, so an owner
// whose lease lapsed cannot overwrite a newer claim; it keeps the outcome
// for the replay TTL on Redis's clock and publishes it. Waiters on every
// replica get it from that publication, or, should it be missed (a
// reconnect), by polling.
//
// The guarantee is at-most-once per live owner, not exactly-once: an
// owner that dies mid-call (or is cut off from Redis longer than its
// lease) releases the key when the lease lapses, and the next call with
// the key runs again. Waiters of the lost owner get an error wrapping
// idempotency.ErrUnavailable and may call again.
package redisstore

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/toolhost/toolhost/idempotency"
	"github.com/toolhost/toolhost/internal/redisconn"
)

// Defaults of Options.
const (
	DefaultLease = 30 * time.Second
	DefaultPoll  = 500 * time.Millisecond
)

// Options configure New. Conn is required; every other field's zero value
// means its default.
type Options struct {
	// Conn is the Redis connection (shared with other stores).
	Conn *redisconn.Conn
	// TTL is how long a completed outcome is replayed; 0 means
	// idempotency.DefaultTTL.
	TTL time.Duration
	// Lease is how long a claim outlives its owner's last renewal; 0 means
	// DefaultLease. The owner renews it every Lease/3.
	Lease time.Duration
	// Poll is how often a waiter reads the key in case it missed the
	// outcome's publication; 0 means DefaultPoll.
	Poll time.Duration
	// Errors encodes outcome errors; nil keeps only their message (the
	// dispatcher passes its own codec, so every replica replays the same
	// envelope).
	Errors idempotency.ErrorCodec
	// Limits bound each caller's keys and bytes, as in the in-memory
	// store; zero fields mean their defaults. MaxKeys and MaxBytes (the
	// totals) are left to Redis's maxmemory (accounts.go).
	Limits idempotency.Limits
}

// Store is the Redis idempotency.Store. It is safe for concurrent use.
// Close it to stop its subscription (it does not close the Conn).
type Store struct {
	opts    Options
	conn    *redisconn.Conn
	channel string
	sub     *redis.PubSub
	done    chan struct{}
	closed  chan struct{} // closed by Close: leaders stop renewing
	close   sync.Once

	mu      sync.Mutex
	waiters map[string]map[chan message]struct{}
	leaders map[string]*leader // running here, by owner token
}

// message is what a completion publishes on the store's channel.
type message struct {
	Key   string `json:"k"`
	Owner string `json:"w"`
	// Abandoned: the last waiter left; the owner stops the execution.
	Abandoned bool            `json:"abandoned,omitempty"`
	Kept      bool            `json:"kept"`
	Outcome   json.RawMessage `json:"o"`
}

// stored is an Outcome as kept in Redis.
type stored struct {
	Result   []byte `json:"r,omitempty"`
	Err      []byte `json:"e,omitempty"`
	Attempts int    `json:"a"`
}

// New returns a store on opts.Conn and subscribes to its completions.
func New(opts Options) *Store {
	if opts.TTL <= 0 {
		opts.TTL = idempotency.DefaultTTL
	}
	if opts.Lease <= 0 {
		opts.Lease = DefaultLease
	}
	if opts.Poll <= 0 {
		opts.Poll = DefaultPoll
	}
	opts.Limits = opts.Limits.WithDefaults()
	s := &Store{opts: opts, conn: opts.Conn, channel: opts.Conn.Key("idem:done"),
		done: make(chan struct{}), closed: make(chan struct{}), waiters: make(map[string]map[chan message]struct{}),
		leaders: make(map[string]*leader)}
	s.sub = s.conn.Client.Subscribe(context.Background(), s.channel)
	go s.listen()
	return s
}

// Close ends the subscription and the renewal of this store's claims, as
// when the replica goes away: their leases lapse in Redis. Waiters still
// waiting keep polling. It may be called more than once.
func (s *Store) Close() error {
	var err error
	s.close.Do(func() {
		close(s.closed)
		err = s.sub.Close()
		<-s.done
	})
	return err
}

func (s *Store) key(k string) string { return s.conn.Key("idem:k:" + k) }

// Acquire implements idempotency.Store. Redis unreachable is an error
// wrapping idempotency.ErrUnavailable: the key's state is unknown, so
// nothing runs. A new key over its caller's Limits is a
// *idempotency.LimitError, as in the in-memory store; the totals are left
// to Redis's maxmemory (docs/SCALING.md).
func (s *Store) Acquire(ctx context.Context, key, fingerprint string) (idempotency.Claim, error) {
	owner := token()
	caller := idempotency.CallerFrom(ctx)
	l := s.opts.Limits
	var reply []any
	err := s.conn.Do(ctx, func(ctx context.Context) error {
		var err error
		reply, err = acquireScript.Run(ctx, s.conn.Client, []string{s.key(key)},
			owner, fingerprint, s.opts.Lease.Milliseconds(), caller, key, s.acctPrefix(),
			l.MaxKeysPerCaller, l.MaxBytesPerCaller, len(key)+len(fingerprint)+entryOverhead).Slice()
		return err
	})
	if err != nil {
		return nil, unavailable(err)
	}
	if len(reply) == 0 {
		return nil, fmt.Errorf("idempotency store: the claim script answered nothing")
	}
	switch str(reply[0]) {
	case "leader":
		l := &leader{s: s, key: key, owner: owner, done: make(chan struct{}), stop: make(chan struct{}), abandoned: make(chan struct{})}
		s.mu.Lock()
		s.leaders[owner] = l
		s.mu.Unlock()
		go l.renew()
		return l, nil
	case "conflict":
		return nil, &idempotency.ConflictError{Key: key}
	case "limit":
		return nil, limitError(reply, caller)
	case "done":
		o, err := s.decode([]byte(str(at(reply, 1))))
		if err != nil {
			return nil, err
		}
		return replay{o}, nil
	default: // running
		return &follower{s: s, key: key, owner: str(at(reply, 1))}, nil
	}
}

// str and at read a script's reply without trusting its shape: a value
// that is not there reads as "".
func str(v any) string {
	s, _ := v.(string)
	return s
}

func at(v []any, i int) any {
	if i < len(v) {
		return v[i]
	}
	return nil
}

func unavailable(err error) error {
	return fmt.Errorf("%w: %v", idempotency.ErrUnavailable, err)
}

func token() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

func (s *Store) encode(o idempotency.Outcome) ([]byte, error) {
	st := stored{Result: o.Result, Attempts: o.Attempts}
	if o.Err != nil {
		if s.opts.Errors != nil {
			b, err := s.opts.Errors.EncodeError(o.Err)
			if err != nil {
				return nil, err
			}
			st.Err = b
		} else {
			st.Err = []byte(o.Err.Error())
		}
	}
	return json.Marshal(st)
}

func (s *Store) decode(b []byte) (idempotency.Outcome, error) {
	var st stored
	if err := json.Unmarshal(b, &st); err != nil {
		return idempotency.Outcome{}, fmt.Errorf("idempotency store: a kept outcome is not valid: %v", err)
	}
	o := idempotency.Outcome{Result: st.Result, Attempts: st.Attempts}
	if st.Err != nil {
		if s.opts.Errors == nil {
			o.Err = errors.New(string(st.Err))
		} else {
			var err error
			if o.Err, err = s.opts.Errors.DecodeError(st.Err); err != nil {
				return idempotency.Outcome{}, fmt.Errorf("idempotency store: a kept error is not valid: %v", err)
			}
		}
	}
	return o, nil
}

// listen hands each published completion to the waiters of its key.
// go-redis resubscribes by itself after a reconnect; what is published in
// between, the waiters' polling finds.
func (s *Store) listen() {
	defer close(s.done)
	for msg := range s.sub.Channel() {
		var m message
		if json.Unmarshal([]byte(msg.Payload), &m) != nil {
			continue
		}
		s.mu.Lock()
		if l := s.leaders[m.Owner]; l != nil && m.Abandoned {
			l.abandon()
		}
		for ch := range s.waiters[m.Key] {
			select {
			case ch <- m:
			default: // it already has one: the first is the outcome
			}
		}
		s.mu.Unlock()
	}
}

func (s *Store) watch(key string) (chan message, func()) {
	ch := make(chan message, 1)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.waiters[key] == nil {
		s.waiters[key] = make(map[chan message]struct{})
	}
	s.waiters[key][ch] = struct{}{}
	return ch, func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		delete(s.waiters[key], ch)
		if len(s.waiters[key]) == 0 {
			delete(s.waiters, key)
		}
	}
}
