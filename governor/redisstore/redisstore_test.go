package redisstore_test

import (
	"context"
	"fmt"
	"maps"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolhost/toolhost/events"
	"github.com/toolhost/toolhost/governor"
	"github.com/toolhost/toolhost/governor/redisstore"
	"github.com/toolhost/toolhost/internal/redisconn"
	"github.com/toolhost/toolhost/internal/testkit/redistest"
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
	if err := a.Refund(ctx, "p", tenPerSecond, 1, ""); err != nil {
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

// BenchmarkTake is one draw's store cost, in memory and on a local Redis,
// counted under an agent as every draw now is.
func BenchmarkTake(b *testing.B) {
	l := governor.Limit{Capacity: 1 << 40, Interval: time.Hour, Burst: 1 << 30, Window: 10 * time.Second, Agents: governor.DefaultMaxAgents}
	run := func(b *testing.B, s governor.Store) {
		for b.Loop() {
			if _, err := s.Take(context.Background(), "q", l, governor.Draw{Cost: 1, Agent: "triage-3"}); err != nil {
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

// Replicas count each agent's draws in one shared window (Redis's clock):
// any name, up to Limit.Agents of them, the rest under "other", whose
// sum is the quota's usage; a refund comes off the agent that drew. The
// keys stay bounded however many agents come: at most Agents names, and
// 50 ring fields per name (plus other's).
func TestRedisUsagePerAgent(t *testing.T) {
	srv := redistest.Start(t)
	c := conn(t, srv)
	a, b := redisstore.New(c), store(t, srv)
	t.Cleanup(func() { a.Close() })
	ctx := context.Background()
	l := governor.Limit{Capacity: 1000, Interval: time.Second, Burst: 1000, Window: 10 * time.Second, Agents: 3}
	draws := []struct {
		s     *redisstore.Store
		agent string
		cost  int64
	}{
		{a, "triage:1", 3}, {b, "triage:1", 2}, {b, "Ünïcode ✓", 1}, {a, "", 4},
		{b, "late", 5}, {a, "later", 6}, {b, "other", 7}, {a, "triage:1", 1},
	}
	for i, d := range draws {
		r, err := d.s.Take(ctx, "q", l, governor.Draw{Cost: d.cost, Agent: d.agent})
		if err != nil || !r.Granted || r.Agents != nil {
			t.Fatalf("draw %d: %+v, %v; want granted, with no agents read", i, r, err)
		}
	}
	if err := b.Refund(ctx, "q", l, 1, "triage:1"); err != nil {
		t.Fatal(err)
	}
	if err := a.Refund(ctx, "q", l, 2, "never drew"); err != nil { // counted where its draw would have gone
		t.Fatal(err)
	}
	r, err := b.Peek(ctx, "q", l)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int64{"triage:1": 5, "Ünïcode ✓": 1, "": 4, governor.OtherAgent: 5 + 6 + 7 - 2}
	var sum int64
	for _, n := range r.Agents {
		sum += n
	}
	if !maps.Equal(r.Agents, want) || sum != r.Used {
		t.Fatalf("agents %v (sum %d, used %d); want %v summing to used", r.Agents, sum, r.Used, want)
	}

	for i := range 200 {
		if _, err := a.Take(ctx, "many", l, governor.Draw{Cost: 1, Agent: fmt.Sprintf("agent-%d", i)}); err != nil {
			t.Fatal(err)
		}
	}
	names, err := c.Client.HLen(ctx, c.Key("gov:n:many")).Result()
	if err != nil {
		t.Fatal(err)
	}
	fields, err := c.Client.HLen(ctx, c.Key("gov:a:many")).Result()
	if err != nil {
		t.Fatal(err)
	}
	if names != 3 || fields > 50*4 {
		t.Fatalf("after 200 agents: %d names, %d ring fields; want 3 and at most 200", names, fields)
	}
	r, _ = a.Peek(ctx, "many", l)
	if len(r.Agents) != 4 || r.Agents[governor.OtherAgent] != 197 {
		t.Fatalf("after 200 agents: %v; want 3 named and other 197", r.Agents)
	}
}

// A named agent whose draws all left the window (by Redis's clock) gives
// its name to a newcomer, and its ring fields go with it. The window is
// a millisecond, so that Redis's clock passes it between two scripts.
func TestRedisAgentAgesOut(t *testing.T) {
	srv := redistest.Start(t)
	c := conn(t, srv)
	s := redisstore.New(c)
	t.Cleanup(func() { s.Close() })
	// The newcomer's own use must still be inside the window when it is
	// read back; on a loaded machine the read can come later than a short
	// window, so a round whose read came too late is run again with a
	// window twice as long, on a quota of its own.
	for window, round := 10*time.Millisecond, 0; ; window, round = 2*window, round+1 {
		if window > 10*time.Second {
			t.Fatal("Redis answered no read within 10s of the draw before it")
		}
		q := fmt.Sprintf("q%d", round)
		if agesOut(t, c, s, q, governor.Limit{Capacity: 1000, Interval: time.Second, Burst: 1000, Window: window, Agents: 1}) {
			return
		}
	}
}

// agesOut runs one round of TestRedisAgentAgesOut on quota q; false means
// the read came too late to judge, and nothing was checked.
func agesOut(t *testing.T, c *redisconn.Conn, s *redisstore.Store, q string, l governor.Limit) bool {
	t.Helper()
	ctx := context.Background()
	first, err := s.Take(ctx, q, l, governor.Draw{Cost: 1, Agent: "old"})
	if err != nil {
		t.Fatal(err)
	}
	// Read Redis's clock until the window has passed: no sleep, and no
	// replica's clock.
	for {
		r, err := s.Peek(ctx, q, l)
		if err != nil {
			t.Fatal(err)
		}
		if r.Now.Sub(first.Now) > 2*l.Window {
			break
		}
	}
	taken, err := s.Take(ctx, q, l, governor.Draw{Cost: 2, Agent: "new"})
	if err != nil {
		t.Fatal(err)
	}
	r, err := s.Peek(ctx, q, l)
	if err != nil {
		t.Fatal(err)
	}
	if r.Now.Sub(taken.Now) >= l.Window {
		return false
	}
	if !maps.Equal(r.Agents, map[string]int64{"new": 2}) {
		t.Fatalf("agents %v; want the newcomer named, the old one gone", r.Agents)
	}
	names, _ := c.Client.HKeys(ctx, c.Key("gov:n:"+q)).Result()
	fields, _ := c.Client.HKeys(ctx, c.Key("gov:a:"+q)).Result()
	if len(names) != 1 || names[0] != "new" || len(fields) != 1 || !strings.HasSuffix(fields[0], ":new") {
		t.Fatalf("names %v, ring fields %v; want only the newcomer's", names, fields)
	}
	return true
}

// Through two governors (replicas) on one Redis, governor.status on either
// shows every agent's usage: the callers of tool calls and the agents of
// governor.acquire, whichever replica served them.
func TestRedisStatusPerAgentAcrossReplicas(t *testing.T) {
	srv := redistest.Start(t)
	var govs []*governor.Governor
	for range 2 {
		g, err := governor.New(governor.Config{Store: store(t, srv), Broadcast: -1,
			Quotas: []governor.Quota{{Name: "api", Capacity: 100, Interval: time.Second, Tools: map[string]int64{"gh.search": 2}}}})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(g.Close)
		govs = append(govs, g)
	}
	ctx := context.Background()
	if _, err := govs[0].Admit(ctx, "gh.search", "", "alice"); err != nil {
		t.Fatal(err)
	}
	if _, err := govs[1].Acquire(ctx, governor.Request{Quota: "api", Agent: "triage-3", Cost: 3}); err != nil {
		t.Fatal(err)
	}
	for i, g := range govs {
		s := g.Status(ctx)[0]
		want := map[string]governor.AgentUsage{"alice": {Used: 2}, "triage-3": {Used: 3}}
		if !maps.Equal(s.Agents, want) || s.Used != 5 {
			t.Fatalf("replica %d: agents %v, used %d; want %v, 5", i, s.Agents, s.Used, want)
		}
	}
}
