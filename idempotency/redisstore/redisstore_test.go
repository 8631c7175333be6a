package redisstore_test

import (
	"context"
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/toolhost/toolhost/idempotency"
	"github.com/toolhost/toolhost/idempotency/redisstore"
	"github.com/toolhost/toolhost/idempotency/storetest"
	"github.com/toolhost/toolhost/internal/redisconn"
	"github.com/toolhost/toolhost/internal/testkit/redistest"
)

// replicas returns n stores, each with its own connection (as n replicas
// have), on srv, with a short poll so a missed publication costs little.
func replicas(t *testing.T, srv *redistest.Server, n int, opts redisstore.Options) ([]*redisstore.Store, []*redisconn.Conn) {
	t.Helper()
	var stores []*redisstore.Store
	var conns []*redisconn.Conn
	for range n {
		c, err := redisconn.Open(redisconn.Options{URL: srv.URL(), Probe: 10 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		o := opts
		o.Conn = c
		o.Poll = max(o.Poll, 20*time.Millisecond)
		s := redisstore.New(o)
		t.Cleanup(func() { s.Close(); c.Close() })
		stores, conns = append(stores, s), append(conns, c)
	}
	return stores, conns
}

// The Redis store keeps the same contract as the in-memory one, with the
// stores as separate replicas on one Redis.
func TestRedisContract(t *testing.T) {
	srv := redistest.Start(t)
	storetest.Run(t, func(t *testing.T, n int) []idempotency.Store {
		flush(t, srv)
		stores, _ := replicas(t, srv, n, redisstore.Options{})
		out := make([]idempotency.Store, n)
		for i, s := range stores {
			out[i] = s
		}
		return out
	})
}

// The Redis store applies the same per-caller bounds as the in-memory one,
// on every replica: one identity cannot fill Redis and make every other
// identity's keyed calls fail closed.
func TestRedisLimitsContract(t *testing.T) {
	srv := redistest.Start(t)
	storetest.RunLimits(t, func(t *testing.T, n int, limits idempotency.Limits, ttl time.Duration) []idempotency.Store {
		flush(t, srv)
		stores, _ := replicas(t, srv, n, redisstore.Options{Limits: limits, TTL: ttl})
		out := make([]idempotency.Store, n)
		for i, s := range stores {
			out[i] = s
		}
		return out
	})
}

// The Redis store bounds each caller's tasks as the in-memory one does.
func TestRedisTaskLimitsContract(t *testing.T) {
	srv := redistest.Start(t)
	storetest.RunTaskLimits(t, func(t *testing.T, n int, limits idempotency.Limits) []idempotency.Tasks {
		flush(t, srv)
		stores, _ := replicas(t, srv, n, redisstore.Options{Limits: limits})
		out := make([]idempotency.Tasks, n)
		for i, s := range stores {
			out[i] = s
		}
		return out
	})
}

func flush(t *testing.T, srv *redistest.Server) {
	c, err := redisconn.Open(redisconn.Options{URL: srv.URL()})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.Client.FlushAll(context.Background()).Err(); err != nil {
		t.Fatal(err)
	}
}

// waitFor polls cond until it holds, failing after a generous bound; it
// waits on Redis's state, not on time.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond) // polling interval of a bounded poll
	}
}

// An owner whose lease lapsed cannot complete: the key has a new owner,
// whose outcome stands; the old owner's caller still gets its own result.
func TestFencingAfterLeaseLapse(t *testing.T) {
	srv := redistest.Start(t)
	stores, conns := replicas(t, srv, 2, redisstore.Options{})
	ctx := context.Background()
	old, err := stores[0].Acquire(ctx, "k", "fp")
	if err != nil || !old.Leader() {
		t.Fatalf("acquire: %v", err)
	}
	// The lease lapses (as when the owner is cut off longer than it).
	key := conns[0].Key("idem:k:k")
	if err := conns[0].Client.PExpire(ctx, key, time.Millisecond).Err(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the lease to lapse", func() bool { return conns[0].Client.Exists(ctx, key).Val() == 0 })
	next, err := stores[1].Acquire(ctx, "k", "fp")
	if err != nil || !next.Leader() {
		t.Fatalf("after the lapse the key must be free to claim: %v", err)
	}
	old.Complete(idempotency.Outcome{Result: []byte(`"old"`)}, true)
	if o, _ := old.Wait(ctx); string(o.Result) != `"old"` {
		t.Fatalf("the old owner's caller got %q, want its own result", o.Result)
	}
	if st := conns[0].Client.HGet(ctx, key, "state").Val(); st != "running" {
		t.Fatalf("the fenced owner wrote: state %q, want the new owner's claim still running", st)
	}
	next.Complete(idempotency.Outcome{Result: []byte(`"new"`)}, true)
	r, _ := stores[0].Acquire(ctx, "k", "fp")
	if o, _ := r.Wait(ctx); string(o.Result) != `"new"` {
		t.Fatalf("replay %q, want the new owner's outcome", o.Result)
	}
}

// An owner that dies (stops renewing, never completes) releases the key
// when its lease lapses: its waiter is told to call again, and the next
// call leads.
func TestDeadOwnerReleasesAfterLease(t *testing.T) {
	srv := redistest.Start(t)
	stores, _ := replicas(t, srv, 2, redisstore.Options{Lease: 300 * time.Millisecond})
	ctx := context.Background()
	dead, err := stores[0].Acquire(ctx, "k", "fp")
	if err != nil || !dead.Leader() {
		t.Fatalf("acquire: %v", err)
	}
	stores[0].Close() // the owner's replica goes away: no more renewals
	w, err := stores[1].Acquire(ctx, "k", "fp")
	if err != nil || w.Leader() {
		t.Fatalf("a live claim must make a waiter: %v", err)
	}
	_, err = w.Wait(ctx)
	if !errors.Is(err, idempotency.ErrUnavailable) {
		t.Fatalf("waiter of a dead owner: %v, want ErrUnavailable", err)
	}
	again, err := stores[1].Acquire(ctx, "k", "fp")
	if err != nil || !again.Leader() {
		t.Fatalf("after the lease: %v, want to lead", err)
	}
}

// A key whose hash in Redis is not what the store writes (another program,
// an old version) is an error for the call, never a crash.
func TestMalformedKeyIsAnError(t *testing.T) {
	srv := redistest.Start(t)
	stores, conns := replicas(t, srv, 1, redisstore.Options{})
	ctx := context.Background()
	for name, fields := range map[string][]any{
		"outcome not JSON": {"fp", "fp", "state", "done", "outcome", "garbage"},
		"no outcome":       {"fp", "fp", "state", "done"},
	} {
		key := conns[0].Key("idem:k:" + name)
		if err := conns[0].Client.HSet(ctx, key, fields...).Err(); err != nil {
			t.Fatal(err)
		}
		if _, err := stores[0].Acquire(ctx, name, "fp"); err == nil {
			t.Errorf("%s: Acquire succeeded", name)
		}
	}
}

// BenchmarkKeyedClaim is the store's cost per keyed call (claim and
// completion), in memory and on a local Redis.
func BenchmarkKeyedClaim(b *testing.B) {
	run := func(b *testing.B, s idempotency.Store) {
		ctx := context.Background()
		for i := 0; b.Loop(); i++ {
			c, err := s.Acquire(ctx, "k"+strconv.Itoa(i), "fp")
			if err != nil || !c.Leader() {
				b.Fatal(err)
			}
			c.Complete(idempotency.Outcome{Result: []byte(`{"ok":true}`), Attempts: 1}, true)
		}
	}
	b.Run("memory", func(b *testing.B) { run(b, idempotency.NewMemory(0)) })
	b.Run("redis", func(b *testing.B) {
		srv := redistest.Start(b)
		c, err := redisconn.Open(redisconn.Options{URL: srv.URL()})
		if err != nil {
			b.Fatal(err)
		}
		s := redisstore.New(redisstore.Options{Conn: c})
		defer func() { s.Close(); c.Close() }()
		run(b, s)
	})
}

// The Redis store keeps the task contract, the stores as replicas.
func TestRedisTasksContract(t *testing.T) {
	srv := redistest.Start(t)
	storetest.RunTasks(t, func(t *testing.T, n int) []idempotency.Tasks {
		flush(t, srv)
		stores, _ := replicas(t, srv, n, redisstore.Options{})
		out := make([]idempotency.Tasks, n)
		for i, s := range stores {
			out[i] = s
		}
		return out
	})
}

// A task's expiry is set in Redis, on Redis's clock: a working task holds
// the lease (renewed by its replica), a terminal one the TTL from its
// end, and its alias goes with it.
func TestRedisTaskExpiry(t *testing.T) {
	srv := redistest.Start(t)
	stores, conns := replicas(t, srv, 1, redisstore.Options{TTL: time.Hour, Lease: 10 * time.Minute})
	s, c := stores[0], conns[0]
	ctx := context.Background()
	pttl := func(key string) time.Duration {
		d, err := c.Client.PTTL(ctx, c.Key(key)).Result()
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	if _, _, err := s.CreateTask(ctx, idempotency.Task{ID: "x", Caller: "a"}, "a\x00k"); err != nil {
		t.Fatal(err)
	}
	if d := pttl("idem:task:x"); d <= 0 || d > 10*time.Minute {
		t.Fatalf("working task expiry %v, want the lease (10m)", d)
	}
	end, err := s.FinishTask(ctx, "x", idempotency.TaskEnd{Status: idempotency.TaskCompleted, Result: []byte(`1`)})
	if err != nil || !end.Expires.Equal(end.Updated.Add(time.Hour)) {
		t.Fatalf("finish: %+v, %v", end, err)
	}
	for _, key := range []string{"idem:task:x", "idem:talias:a\x00k"} {
		if d := pttl(key); d <= 10*time.Minute || d > time.Hour {
			t.Fatalf("%q expires in %v, want the TTL (1h)", key, d)
		}
	}
	if err := c.Client.Del(ctx, c.Key("idem:task:x")).Err(); err != nil { // as Redis does at expiry
		t.Fatal(err)
	}
	if _, err := s.GetTask(ctx, "x"); !errors.Is(err, idempotency.ErrTaskNotFound) {
		t.Fatalf("expired task: %v, want ErrTaskNotFound", err)
	}
	if g, created, err := s.CreateTask(ctx, idempotency.Task{ID: "y", Caller: "a"}, "a\x00k"); err != nil || !created {
		t.Fatalf("alias of an expired task: %+v %v %v, want a new task", g, created, err)
	}
}

// A key that is not kept, or is abandoned, leaves its caller's account at
// once: the caller's bound counts only what Redis holds.
func TestCallerAccountFollowsKeys(t *testing.T) {
	srv := redistest.Start(t)
	stores, conns := replicas(t, srv, 1, redisstore.Options{Limits: idempotency.Limits{MaxKeysPerCaller: 1}})
	ctx := idempotency.WithCaller(context.Background(), "carol")
	for i := range 3 {
		c, err := stores[0].Acquire(ctx, "k"+strconv.Itoa(i), "fp")
		if err != nil {
			t.Fatalf("key %d after the previous one left: %v", i, err)
		}
		if i%2 == 0 {
			c.Complete(idempotency.Outcome{}, false)
		} else if !c.Release() {
			t.Fatal("the only waiter's release did not abandon the key")
		}
	}
	n, err := conns[0].Client.Exists(context.Background(), conns[0].Key("idem:ca:carol"), conns[0].Key("idem:cb:carol")).Result()
	if err != nil || n != 0 {
		t.Fatalf("carol's account outlived her keys: %d keys, %v", n, err)
	}
}
