// Package redisstore is a breaker.Shared in Redis, so that a breaker that
// opens on one replica of toolhost opens on all of them for the rest of its
// cool-down. Only openings are shared: each opening is one key per tool
// whose expiry (on Redis's clock) is the cool-down's end, and one message
// on a channel that every replica listens to. Counts of calls and failures
// stay per replica, so a closed breaker's Allow and Record never touch
// Redis; a replica reads the key once when its own cool-down ends, before
// its first probe, in case it missed a message.
package redisstore

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/toolhost/toolhost/internal/redisconn"
)

// openScript records an opening: KEYS[1] the tool's key, KEYS[2] the
// channel; ARGV[1] the cool-down in ms, ARGV[2] the replica's id, ARGV[3]
// the tool. The key keeps the later of its current end and the new one,
// and the message carries what remains of it, so every replica opens
// until the same moment, whatever its own clock says.
var openScript = redis.NewScript(`
local ms = tonumber(ARGV[1])
local ttl = redis.call('PTTL', KEYS[1])
if ttl < ms then
  redis.call('SET', KEYS[1], ARGV[2], 'PX', ms)
  ttl = ms
end
redis.call('PUBLISH', KEYS[2], ARGV[2] .. '\n' .. ttl .. '\n' .. ARGV[3])
return ttl
`)

// Store is the Redis breaker.Shared. It is safe for concurrent use. Close
// it to end its subscription (it does not close the Conn).
type Store struct {
	conn    *redisconn.Conn
	id      string // this replica, to ignore its own messages
	channel string
	sub     *redis.PubSub
	out     chan opening
	stop    chan struct{}
	done    sync.WaitGroup
	once    sync.Once

	mu        sync.Mutex
	listeners []func(tool string, cooldown time.Duration)

	local atomic.Int64 // decisions taken on local state because Redis did not answer
	lost  atomic.Int64 // openings not shared because Redis did not answer
}

type opening struct {
	tool     string
	cooldown time.Duration
}

// New returns a store on conn and subscribes to other replicas' openings.
func New(conn *redisconn.Conn) *Store {
	s := &Store{conn: conn, id: strconv.FormatInt(time.Now().UnixNano(), 36) + fmt.Sprintf("%p", conn),
		channel: conn.Key("brk:opened"), out: make(chan opening, 64), stop: make(chan struct{})}
	s.sub = conn.Client.Subscribe(context.Background(), s.channel)
	s.done.Add(2)
	go s.listen()
	go s.publish()
	return s
}

func (s *Store) key(tool string) string { return s.conn.Key("brk:open:" + tool) }

// Opened implements breaker.Shared: the opening is recorded and published
// in the background. While Redis does not answer it stays this replica's
// alone, and LostOpenings counts it.
func (s *Store) Opened(tool string, cooldown time.Duration) {
	select {
	case s.out <- opening{tool, cooldown}:
	default: // a burst of openings: each replica still opens on its own failures
		s.lost.Add(1)
	}
}

// Remaining implements breaker.Shared: what remains of the latest opening
// of tool on any replica, by Redis's clock. An error (Redis away) means
// the replica's own cool-down decides; LocalDecisions counts it.
func (s *Store) Remaining(tool string) (time.Duration, error) {
	var d time.Duration
	err := s.conn.Do(context.Background(), func(ctx context.Context) error {
		var err error
		// Negative (-1 ns, -2 ns) when the key has no expiry or is gone.
		d, err = s.conn.Client.PTTL(ctx, s.key(tool)).Result()
		return err
	})
	if err != nil {
		s.local.Add(1)
		return 0, err
	}
	return max(d, 0), nil
}

// OnOpened implements breaker.Shared.
func (s *Store) OnOpened(f func(tool string, cooldown time.Duration)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.listeners = append(s.listeners, f)
}

// LocalDecisions is how many times a breaker ended a cool-down on its own
// state because Redis did not answer.
func (s *Store) LocalDecisions() int64 { return s.local.Load() }

// LostOpenings is how many openings stayed this replica's own because
// Redis did not answer (or too many came at once).
func (s *Store) LostOpenings() int64 { return s.lost.Load() }

// Close ends the subscription. It may be called more than once.
func (s *Store) Close() error {
	var err error
	s.once.Do(func() {
		close(s.stop)
		err = s.sub.Close()
		s.done.Wait()
	})
	return err
}

func (s *Store) publish() {
	defer s.done.Done()
	for {
		select {
		case <-s.stop:
			return
		case o := <-s.out:
			ms := max(o.cooldown.Milliseconds(), 1)
			err := s.conn.Do(context.Background(), func(ctx context.Context) error {
				return openScript.Run(ctx, s.conn.Client, []string{s.key(o.tool), s.channel}, ms, s.id, o.tool).Err()
			})
			if err != nil {
				s.lost.Add(1)
			}
		}
	}
}

// listen delivers other replicas' openings. Each (re)subscription is
// followed by a scan of the open keys: messages published while this
// replica was not subscribed (it started later, or its connection
// dropped) are lost, the keys are not.
func (s *Store) listen() {
	defer s.done.Done()
	for m := range s.sub.ChannelWithSubscriptions() {
		switch m := m.(type) {
		case *redis.Subscription:
			if m.Kind == "subscribe" {
				s.done.Add(1)
				go s.resync()
			}
		case *redis.Message:
			from, rest, ok1 := strings.Cut(m.Payload, "\n")
			ms, tool, ok2 := strings.Cut(rest, "\n")
			n, err := strconv.ParseInt(ms, 10, 64)
			if !ok1 || !ok2 || err != nil || from == s.id {
				continue
			}
			s.deliver(tool, time.Duration(n)*time.Millisecond)
		}
	}
}

func (s *Store) deliver(tool string, d time.Duration) {
	if d <= 0 {
		return
	}
	s.mu.Lock()
	ls := append([]func(string, time.Duration){}, s.listeners...)
	s.mu.Unlock()
	for _, f := range ls {
		f(tool, d)
	}
}

// resync opens locally every tool another replica holds open now.
func (s *Store) resync() {
	defer s.done.Done()
	prefix := s.key("")
	var cursor uint64
	for {
		select {
		case <-s.stop:
			return
		default:
		}
		var keys []string
		err := s.conn.Do(context.Background(), func(ctx context.Context) error {
			var err error
			keys, cursor, err = s.conn.Client.Scan(ctx, cursor, prefix+"*", 100).Result()
			return err
		})
		if err != nil {
			return // Redis went away again; the next subscription scans anew
		}
		for _, k := range keys {
			s.resyncKey(k, strings.TrimPrefix(k, prefix))
		}
		if cursor == 0 {
			return
		}
	}
}

func (s *Store) resyncKey(key, tool string) {
	var owner string
	var ttl time.Duration
	err := s.conn.Do(context.Background(), func(ctx context.Context) error {
		pipe := s.conn.Client.Pipeline()
		get, pttl := pipe.Get(ctx, key), pipe.PTTL(ctx, key)
		if _, err := pipe.Exec(ctx); err != nil {
			return err
		}
		owner, ttl = get.Val(), pttl.Val()
		return nil
	})
	if err == nil && owner != s.id {
		s.deliver(tool, ttl)
	}
}
