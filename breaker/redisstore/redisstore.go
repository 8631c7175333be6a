// Package redisstore is a breaker.Shared in Redis, so that a breaker that
// opens on one replica of toolhost opens on all of them for the rest of its
// cool-down. Only openings are shared: each opening is one key per tool
// whose expiry (on Redis's clock) is the cool-down's end, and one message
// on a channel that every replica listens to. Counts of calls and failures
// stay per replica, so a closed breaker's Allow and Record never touch
// Redis; a replica reads the key once when its own cool-down ends, before
// its first probe, in case it missed a message.
//
// A message is a notice, never an order: anyone who can PUBLISH on the
// channel can send one, so the store passes on only a well-formed tool
// name, and the breaker.Set it serves ignores a tool it does not serve and
// otherwise reads the tool's key (its PTTL, on Redis's clock) and opens
// for that, at most the tool's own longest cool-down. No key, no opening.
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
// and the message carries what remains of it (for replicas of earlier
// versions; this one reads the key instead), so every replica opens until
// the same moment, whatever its own clock says.
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

	// scans counts the resyncs under way; subscribed is closed once the
	// first subscription's is counted. Tests wait on them (export_test.go)
	// to write a key no scan will find.
	scans      sync.WaitGroup
	subscribed chan struct{}
	subOnce    sync.Once

	mu        sync.Mutex
	closed    bool // Close has begun: no new resync may start
	listeners []func(tool string)
	pending   []string            // notices not yet passed on, oldest first
	queued    map[string]struct{} // the tools in pending
	wake      chan struct{}       // a notice was queued

	local   atomic.Int64 // decisions taken on local state because Redis did not answer
	lost    atomic.Int64 // openings not shared because Redis did not answer
	dropped atomic.Int64 // notices dropped: malformed, or more than maxPending waiting
}

// maxPending bounds the notices waiting to be passed on: a flood of
// made-up names costs at most this many entries, however fast it comes.
// A notice for a tool already waiting is folded into it.
const maxPending = 1024

type opening struct {
	tool     string
	cooldown time.Duration
}

// New returns a store on conn and subscribes to other replicas' openings.
func New(conn *redisconn.Conn) *Store {
	s := &Store{conn: conn, id: strconv.FormatInt(time.Now().UnixNano(), 36) + fmt.Sprintf("%p", conn),
		channel: conn.Key("brk:opened"), out: make(chan opening, 64), stop: make(chan struct{}),
		queued: map[string]struct{}{}, wake: make(chan struct{}, 1), subscribed: make(chan struct{})}
	s.sub = conn.Client.Subscribe(context.Background(), s.channel)
	s.done.Add(3)
	go s.listen()
	go s.publish()
	go s.pass()
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
	var ms int64
	err := s.conn.Do(context.Background(), func(ctx context.Context) error {
		var err error
		// The raw integer: go-redis's PTTL multiplies it into a Duration,
		// which wraps for a key set with PX beyond 292 years.
		ms, err = s.conn.Client.Do(ctx, "PTTL", s.key(tool)).Int64()
		return err
	})
	if err != nil {
		s.local.Add(1)
		return 0, err
	}
	// -2 (no key) and -1 (no expiry: not a key this package wrote,
	// which always sets PX) are 0; past the range it saturates.
	return redisconn.Duration(ms, time.Millisecond), nil
}

// OnOpened implements breaker.Shared. The new listener is also given a
// notice for every opening already in Redis: the scan that follows the
// subscription may have run before anyone listened (New subscribes before
// its caller can register), and a replica that starts after an opening
// must still refuse the tool.
func (s *Store) OnOpened(f func(tool string)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.listeners = append(s.listeners, f)
	if !s.closed {
		// Under mu and before Close: listen, publish and pass still
		// run, so the WaitGroup's count is above zero here.
		s.done.Add(1)
		s.scans.Add(1)
		go s.resync(f)
	}
}

// LocalDecisions is how many times a breaker ended a cool-down on its own
// state because Redis did not answer.
func (s *Store) LocalDecisions() int64 { return s.local.Load() }

// LostOpenings is how many openings stayed this replica's own because
// Redis did not answer (or too many came at once).
func (s *Store) LostOpenings() int64 { return s.lost.Load() }

// DroppedNotices is how many messages on the channel were dropped: not a
// notice naming a valid tool name, or more than maxPending waiting at once
// (a flood, or a replica that cannot keep up).
func (s *Store) DroppedNotices() int64 { return s.dropped.Load() }

// Close ends the subscription. It may be called more than once.
func (s *Store) Close() error {
	var err error
	s.once.Do(func() {
		s.mu.Lock()
		s.closed = true
		s.mu.Unlock()
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

// listen queues other replicas' notices. Each (re)subscription is
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
				s.scans.Add(1)
				go s.resync(nil)
				s.subOnce.Do(func() { close(s.subscribed) })
			}
		case *redis.Message:
			// "from\nms\ntool": ms is ignored, the key is read instead.
			from, rest, ok1 := strings.Cut(m.Payload, "\n")
			_, tool, ok2 := strings.Cut(rest, "\n")
			switch {
			case !ok1 || !ok2 || !validName(tool):
				s.dropped.Add(1)
			case from != s.id:
				s.queue(tool)
			}
		}
	}
}

// validName is the manifest's rule for tool names, ^[A-Za-z0-9_.-]{1,128}$
// (docs/ABI.md): nothing else can be a tool this replica serves.
func validName(tool string) bool {
	if len(tool) == 0 || len(tool) > 128 {
		return false
	}
	for i := 0; i < len(tool); i++ {
		switch c := tool[i]; {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', c == '_', c == '.', c == '-':
		default:
			return false
		}
	}
	return true
}

// queue adds a notice for tool, unless one waits already or too many do.
func (s *Store) queue(tool string) {
	s.mu.Lock()
	_, dup := s.queued[tool]
	full := !dup && len(s.pending) >= maxPending
	if !dup && !full {
		s.queued[tool] = struct{}{}
		s.pending = append(s.pending, tool)
	}
	s.mu.Unlock()
	if full {
		s.dropped.Add(1)
		return
	}
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// pass hands queued notices to the listeners, oldest first, off the
// subscription's goroutine: a listener reads Redis, and the subscription
// must keep draining meanwhile.
func (s *Store) pass() {
	defer s.done.Done()
	for {
		select {
		case <-s.stop:
			return
		case <-s.wake:
		}
		for {
			select {
			case <-s.stop:
				return
			default:
			}
			s.mu.Lock()
			if len(s.pending) == 0 {
				s.pending = nil // let a flood's backing array go
				s.mu.Unlock()
				break
			}
			tool := s.pending[0]
			s.pending = s.pending[1:]
			delete(s.queued, tool)
			s.mu.Unlock()
			s.deliver(tool)
		}
	}
}

func (s *Store) deliver(tool string) {
	s.mu.Lock()
	ls := append([]func(string){}, s.listeners...)
	s.mu.Unlock()
	for _, f := range ls {
		f(tool)
	}
}

// resync gives a notice for every tool whose key is in Redis now to only
// (or, when nil, to every listener); they read the keys of the tools they
// serve.
func (s *Store) resync(only func(tool string)) {
	defer s.done.Done()
	defer s.scans.Done()
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
			tool := strings.TrimPrefix(k, prefix)
			switch {
			case !validName(tool):
			case only != nil:
				only(tool)
			default:
				s.deliver(tool)
			}
		}
		if cursor == 0 {
			return
		}
	}
}
