package redisstore_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolhost/toolhost/events"
	"github.com/toolhost/toolhost/governor"
	"github.com/toolhost/toolhost/governor/redisstore"
	"github.com/toolhost/toolhost/internal/redisconn"
	"github.com/toolhost/toolhost/internal/redistest"
)

func conn(t *testing.T, srv *redistest.Server) *redisconn.Conn {
	t.Helper()
	c, err := redisconn.Open(redisconn.Options{URL: srv.URL(), Probe: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func store(t *testing.T, srv *redistest.Server) *redisstore.Store {
	s := redisstore.New(conn(t, srv))
	t.Cleanup(func() { s.Close() })
	return s
}

var tenPerSecond = governor.Limit{Capacity: 10, Interval: time.Second, Burst: 5, Window: 10 * time.Second}

// The Redis pool starts full, refuses past its burst with the wait for one
// token (at most one emission interval, by Redis's clock), counts usage,
// and honours a block from any replica.
func TestRedisTokenAccounting(t *testing.T) {
	srv := redistest.Start(t)
	a, b := store(t, srv), store(t, srv)
	ctx := context.Background()
	for i := range 5 {
		s := []*redisstore.Store{a, b}[i%2]
		r, err := s.Take(ctx, "q", tenPerSecond, governor.Draw{Cost: 1})
		if err != nil || !r.Granted {
			t.Fatalf("draw %d: %+v, %v", i, r, err)
		}
	}
	r, err := a.Take(ctx, "q", tenPerSecond, governor.Draw{Cost: 1})
	if err != nil || r.Granted || r.Wait <= 0 || r.Wait > 100*time.Millisecond || r.Used != 5 {
		t.Fatalf("sixth draw: %+v, %v; want refused, a wait in (0, 100ms], used 5", r, err)
	}
	r, err = b.Block(ctx, "q", tenPerSecond, time.Minute)
	if err != nil || r.Blocked <= 59*time.Second {
		t.Fatalf("block: %+v, %v", r, err)
	}
	r, _ = a.Take(ctx, "q", tenPerSecond, governor.Draw{Cost: 1})
	if r.Granted || r.Wait < 59*time.Second || r.Blocked < 59*time.Second {
		t.Fatalf("draw on a blocked quota from another replica: %+v", r)
	}
	if err := a.Refund(ctx, "p", tenPerSecond, 1); err != nil {
		t.Fatal(err)
	}
}

// Three governors (replicas), each with its own connection and store,
// hammer one quota from nine goroutines: the grants over the run, measured
// on Redis's clock, never exceed burst + capacity × elapsed / interval.
func TestGrantsAcrossReplicasStayWithinQuota(t *testing.T) {
	srv := redistest.Start(t)
	const capacity, burst = 40, 8
	var govs []*governor.Governor
	var stores []*redisstore.Store
	for range 3 {
		s := store(t, srv)
		g, err := governor.New(governor.Config{Store: s, Broadcast: -1, MaxWait: 200 * time.Millisecond,
			Quotas: []governor.Quota{{Name: "api", Capacity: capacity, Interval: time.Second, Burst: burst}}})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(g.Close)
		govs, stores = append(govs, g), append(stores, s)
	}
	l := governor.Limit{Capacity: capacity, Interval: time.Second, Burst: burst, Window: 10 * time.Second}
	ctx := context.Background()
	start, err := stores[0].Peek(ctx, "api", l)
	if err != nil {
		t.Fatal(err)
	}
	var granted atomic.Int64
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for i := range 9 {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				if _, err := govs[i%3].Acquire(ctx, governor.Request{Quota: "api", Priority: governor.Normal}); err == nil {
					granted.Add(1)
				}
			}
		})
	}
	// Run until Redis's clock has moved a second past the start.
	for {
		r, err := stores[0].Peek(ctx, "api", l)
		if err != nil {
			t.Fatal(err)
		}
		if r.Now.Sub(start.Now) >= time.Second {
			break
		}
		time.Sleep(10 * time.Millisecond) // polling Redis's clock
	}
	close(stop)
	wg.Wait()
	end, _ := stores[0].Peek(ctx, "api", l)
	elapsed := end.Now.Sub(start.Now)
	allowed := burst + int64(float64(capacity)*elapsed.Seconds()) + 1
	got := granted.Load()
	t.Logf("granted %d over %v of Redis time; the quota allows at most %d", got, elapsed.Round(time.Millisecond), allowed)
	if got > allowed {
		t.Fatalf("replicas granted %d, more than capacity+burst allows (%d) over %v", got, allowed, elapsed)
	}
	if got < burst {
		t.Fatalf("granted %d, fewer than one burst (%d): the replicas did not draw", got, burst)
	}
	if end.Used != got {
		t.Fatalf("Redis counts %d used, the replicas %d granted", end.Used, got)
	}
}

// A 429 reported on one replica blocks the quota on the others, and
// their event buses show it (pub/sub, not the periodic broadcast).
func TestBlockReachesOtherReplicas(t *testing.T) {
	srv := redistest.Start(t)
	var buses []*events.Bus
	var govs []*governor.Governor
	for range 2 {
		bus := events.New(events.Options{})
		g, err := governor.New(governor.Config{Store: store(t, srv), Events: bus, Broadcast: -1,
			Quotas: []governor.Quota{{Name: "api", Capacity: 10, Interval: time.Second}}})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(g.Close)
		buses, govs = append(buses, bus), append(govs, g)
	}
	sub := buses[1].Subscribe(16, governor.EventState)
	defer sub.Close()
	s, err := govs[0].Report(context.Background(), governor.Feedback{Quota: "api", Status: 429, RetryAfter: time.Minute})
	if err != nil || s.Mode != governor.ModeBlocked {
		t.Fatalf("report: %+v, %v", s, err)
	}
	timeout := time.After(10 * time.Second)
	for {
		select {
		case ev := <-sub.C:
			st := ev.Data.(governor.State)
			if st.Mode == governor.ModeBlocked && st.BlockedUntil != nil && st.BlockedUntil.Equal(*s.BlockedUntil) {
				return
			}
		case <-timeout:
			t.Fatal("the other replica never published the block")
		}
	}
}

// Redis stopped: the governor keeps granting from a local pool at 1/N of
// the quota, says so once, and goes back to the shared pool by itself
// when Redis is back.
func TestFallbackToLocalShareAndBack(t *testing.T) {
	srv := redistest.Start(t)
	c := conn(t, srv)
	shared := redisstore.New(c)
	t.Cleanup(func() { shared.Close() })
	changes := make(chan error, 8)
	f := redisstore.NewFallback(shared, 3, func(err error) { changes <- err })
	l := governor.Limit{Capacity: 30, Interval: time.Hour, Burst: 6, Window: 10 * time.Second}
	ctx := context.Background()
	if r, err := f.Take(ctx, "q", l, governor.Draw{Cost: 1}); err != nil || !r.Granted || f.Local() {
		t.Fatalf("with Redis: %+v, %v, local %v", r, err, f.Local())
	}
	srv.Stop()
	granted := 0
	for range 5 {
		r, err := f.Take(ctx, "q", l, governor.Draw{Cost: 1})
		if err != nil {
			t.Fatalf("a draw failed while Redis is away: %v", err)
		}
		if r.Granted {
			granted++
		}
	}
	if granted != 2 || !f.Local() {
		t.Fatalf("Redis away: %d granted, local %v; want the local share of the burst (6/3 = 2)", granted, f.Local())
	}
	if err := <-changes; err == nil {
		t.Fatal("going local was not reported with Redis's error")
	}
	srv.Restart()
	deadline := time.Now().Add(10 * time.Second)
	for f.Local() {
		if time.Now().After(deadline) {
			t.Fatal("the store never went back to Redis")
		}
		_, _ = f.Take(ctx, "q", l, governor.Draw{Cost: 1})
		time.Sleep(10 * time.Millisecond) // polling until the probe finds Redis
	}
	if err := <-changes; err != nil {
		t.Fatalf("recovery reported %v, want nil", err)
	}
	if f.Spells() != 1 || f.LocalDraws() < 5 {
		t.Fatalf("spells %d, local draws %d", f.Spells(), f.LocalDraws())
	}
}

// BenchmarkTake is one draw's store cost, in memory and on a local Redis.
func BenchmarkTake(b *testing.B) {
	l := governor.Limit{Capacity: 1 << 40, Interval: time.Hour, Burst: 1 << 30, Window: 10 * time.Second}
	run := func(b *testing.B, s governor.Store) {
		for b.Loop() {
			if _, err := s.Take(context.Background(), "q", l, governor.Draw{Cost: 1}); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.Run("memory", func(b *testing.B) { run(b, governor.NewMemory()) })
	b.Run("redis", func(b *testing.B) {
		srv := redistest.Start(b)
		c, err := redisconn.Open(redisconn.Options{URL: srv.URL()})
		if err != nil {
			b.Fatal(err)
		}
		s := redisstore.New(c)
		defer func() { s.Close(); c.Close() }()
		run(b, s)
	})
}
