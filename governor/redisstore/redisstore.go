// Package redisstore is a governor.Store in Redis, so that replicas of
// toolhost share every quota: its GCRA pool (tat), its usage window and
// its blocked_until, updated by scripts that read Redis's clock. Grants
// across all replicas then stay within the quota's capacity plus burst.
// Each replica keeps its own line of waiters (priority order holds per
// replica over the shared pool); a change of mode or blocked_until on one
// replica is published so the others refresh at once.
package redisstore

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/toolhost/toolhost/governor"
	"github.com/toolhost/toolhost/internal/redisconn"
)

// usageBuckets matches governor.Memory: the window in 50 buckets.
const usageBuckets = 50

// Store is the Redis governor.Store. It is safe for concurrent use. Close
// it to end its subscription (it does not close the Conn).
type Store struct {
	conn    *redisconn.Conn
	id      string // this replica, to ignore its own publications
	channel string
	sub     *redis.PubSub
	out     chan string
	done    chan struct{}
	stop    chan struct{}
	once    sync.Once

	mu        sync.Mutex
	listeners []func(quota string)
}

// New returns a store on conn.
func New(conn *redisconn.Conn) *Store {
	s := &Store{conn: conn, id: strconv.FormatInt(time.Now().UnixNano(), 36) + fmt.Sprintf("%p", conn),
		channel: conn.Key("gov:changed"), out: make(chan string, 64), done: make(chan struct{}), stop: make(chan struct{})}
	s.sub = conn.Client.Subscribe(context.Background(), s.channel)
	go s.listen()
	go s.publish()
	return s
}

// Close ends the subscription. It may be called more than once.
func (s *Store) Close() error {
	var err error
	s.once.Do(func() {
		close(s.stop)
		err = s.sub.Close()
		<-s.done
	})
	return err
}

type change struct {
	From  string `json:"from"`
	Quota string `json:"quota"`
}

// Changed implements governor.Shared: it publishes, without blocking the
// caller, that quota changed here.
func (s *Store) Changed(quota string) {
	select {
	case s.out <- quota:
	default: // a burst of changes: the periodic broadcast catches up
	}
}

// OnChanged implements governor.Shared.
func (s *Store) OnChanged(f func(quota string)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.listeners = append(s.listeners, f)
}

func (s *Store) publish() {
	for {
		select {
		case <-s.stop:
			return
		case q := <-s.out:
			b, _ := json.Marshal(change{From: s.id, Quota: q})
			_ = s.conn.Do(context.Background(), func(ctx context.Context) error {
				return s.conn.Client.Publish(ctx, s.channel, b).Err()
			})
		}
	}
}

func (s *Store) listen() {
	defer close(s.done)
	for msg := range s.sub.Channel() {
		var c change
		if json.Unmarshal([]byte(msg.Payload), &c) != nil || c.From == s.id {
			continue
		}
		s.mu.Lock()
		ls := append([]func(string){}, s.listeners...)
		s.mu.Unlock()
		for _, f := range ls {
			f(c.Quota)
		}
	}
}

// Take implements governor.Store.
func (s *Store) Take(ctx context.Context, quota string, l governor.Limit, d governor.Draw) (governor.Result, error) {
	return s.run(ctx, takeScript, quota, l, d.Cost, d.Reserve, d.Agent)
}

// Block implements governor.Store.
func (s *Store) Block(ctx context.Context, quota string, l governor.Limit, dur time.Duration) (governor.Result, error) {
	return s.run(ctx, blockScript, quota, l, dur.Microseconds())
}

// Peek implements governor.Store.
func (s *Store) Peek(ctx context.Context, quota string, l governor.Limit) (governor.Result, error) {
	return s.run(ctx, peekScript, quota, l)
}

// Refund implements governor.Store.
func (s *Store) Refund(ctx context.Context, quota string, l governor.Limit, cost int64, agent string) error {
	_, err := s.run(ctx, refundScript, quota, l, cost, agent)
	return err
}

func (s *Store) run(ctx context.Context, script *redis.Script, quota string, l governor.Limit, extra ...any) (governor.Result, error) {
	emission := max((l.Emission().Nanoseconds()+999)/1000, 1)
	width := max(l.Window.Microseconds()/usageBuckets, 1)
	args := append([]any{emission, l.Burst, width, l.Window.Microseconds(), l.Agents}, extra...)
	keys := []string{s.conn.Key("gov:q:" + quota), s.conn.Key("gov:a:" + quota), s.conn.Key("gov:n:" + quota)}
	var v []any
	err := s.conn.Do(ctx, func(ctx context.Context) error {
		var err error
		v, err = script.Run(ctx, s.conn.Client, keys, args...).Slice()
		return err
	})
	if err != nil {
		return governor.Result{}, err
	}
	ints := make([]int64, 6)
	for _, i := range []int{0, 1, 3, 4, 5} {
		n, ok := at(v, i).(int64)
		if !ok {
			return governor.Result{}, fmt.Errorf("governor script answered %v; want 7 values", v)
		}
		ints[i] = n
	}
	s2, _ := at(v, 2).(string)
	avail, err := strconv.ParseFloat(s2, 64)
	if err != nil {
		return governor.Result{}, fmt.Errorf("governor script answered %v; want 6 values", v)
	}
	// Wait and Blocked come from the quota's hash, which whoever can
	// write Redis can set: range-checked, never wrapped.
	r := governor.Result{
		Granted:   ints[0] == 1,
		Wait:      redisconn.Duration(ints[1], time.Microsecond),
		Available: avail,
		Used:      ints[3],
		Blocked:   redisconn.Duration(ints[4], time.Microsecond),
		Now:       time.UnixMicro(ints[5]),
	}
	if script == peekScript {
		if r.Agents, err = agentsOf(at(v, 6)); err != nil {
			return governor.Result{}, err
		}
	}
	return r, nil
}

// agentsOf reads the peek script's {name, used, …}.
func agentsOf(v any) (map[string]int64, error) {
	list, ok := v.([]any)
	if !ok || len(list)%2 != 0 {
		return nil, fmt.Errorf("governor script answered agents %v; want {name, used, …}", v)
	}
	out := make(map[string]int64, len(list)/2)
	for i := 0; i < len(list); i += 2 {
		name, ok1 := list[i].(string)
		n, ok2 := list[i+1].(int64)
		if !ok1 || !ok2 {
			return nil, fmt.Errorf("governor script answered agents %v; want {name, used, …}", v)
		}
		out[name] = n
	}
	return out, nil
}

func at(v []any, i int) any {
	if i < len(v) {
		return v[i]
	}
	return nil
}
