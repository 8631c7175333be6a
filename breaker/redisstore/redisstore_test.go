package redisstore_test

import (
	"context"
	"testing"
	"time"

	"github.com/toolhost/toolhost/breaker"
	"github.com/toolhost/toolhost/breaker/redisstore"
	"github.com/toolhost/toolhost/internal/redisconn"
	"github.com/toolhost/toolhost/internal/testkit/redistest"
)

// replica is one process's view: its own connection, store and Set, and
// its breakers' transitions.
type replica struct {
	conn    *redisconn.Conn
	store   *redisstore.Store
	set     *breaker.Set
	changes chan string
}

func newReplica(t *testing.T, srv *redistest.Server, s breaker.Settings) *replica {
	t.Helper()
	return newServing(t, srv, s, nil)
}

// newServing is newReplica for a replica that serves only the tools known
// reports (nil: every name).
func newServing(t *testing.T, srv *redistest.Server, s breaker.Settings, known func(string) bool) *replica {
	t.Helper()
	// A generous command timeout: on a loaded machine a slower command
	// would count as Redis being away, and the opening would not be
	// shared (which TestRedisDownDecidesLocally covers on purpose).
	c, err := redisconn.Open(redisconn.Options{URL: srv.URL(), Timeout: 5 * time.Second, Probe: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	r := &replica{conn: c, store: redisstore.New(c), changes: make(chan string, 1024)}
	t.Cleanup(func() { r.store.Close(); c.Close() })
	r.set = breaker.NewSet(s, nil, breaker.SetOptions{Shared: r.store, Known: known, OnChange: func(tool string, from, to breaker.State) {
		r.changes <- tool + " " + from.String() + "→" + to.String()
	}})
	return r
}

// await waits for the replica's next transition, within a bound that only
// a broken store reaches.
func (r *replica) await(t *testing.T, want string) {
	t.Helper()
	select {
	case got := <-r.changes:
		if got != want {
			t.Fatalf("transition %q, want %q", got, want)
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("no transition %q within 10s", want)
	}
}

func trip(t *testing.T, b *breaker.Breaker, n int) {
	t.Helper()
	for range n {
		tk, ok := b.Allow()
		if !ok {
			t.Fatal("a closed breaker refused a call")
		}
		b.Record(tk, breaker.Failure)
	}
}

var minute = breaker.Settings{Failures: 2, Cooldown: time.Minute, Jitter: -1}

// An opening on one replica reaches the others through pub/sub: their
// breakers refuse until the same end, and their own counts are untouched.
// A replica that subscribes later finds the opening by its key.
func TestOpenOnOneReplicaRefusesOnOthers(t *testing.T) {
	srv := redistest.Start(t)
	a, b := newReplica(t, srv, minute), newReplica(t, srv, minute)
	trip(t, b.set.For("other"), 1)
	opened := time.Now()
	trip(t, a.set.For("t"), 2)
	a.await(t, "t closed→open")
	b.await(t, "t closed→open")
	t.Logf("B opened %v after A's opening (pub/sub on loopback)", time.Since(opened))
	if _, ok := b.set.For("t").Allow(); ok {
		t.Fatal("B admitted a call while the tool is open on A")
	}
	end := a.set.For("t").RetryAt()
	if d := b.set.For("t").RetryAt().Sub(end).Abs(); d > 5*time.Second {
		t.Fatalf("B's cool-down ends %v away from A's (%v)", d, end)
	}
	if st := b.set.For("other").State(); st != breaker.Closed {
		t.Fatalf("B's own tool: %v, want closed (counts stay per replica)", st)
	}

	late := newReplica(t, srv, minute)
	late.await(t, "t closed→open")
	if _, ok := late.set.For("t").Allow(); ok {
		t.Fatal("a replica that started after the opening admitted a call")
	}
}

// A replica whose own cool-down ends reads Redis before its first probe:
// an opening it never heard of (its key written without a message) keeps
// it open, one cool-down of its own at a time.
func TestProbeReadsSharedState(t *testing.T) {
	srv := redistest.Start(t)
	short := breaker.Settings{Failures: 1, Cooldown: 50 * time.Millisecond, Jitter: -1}
	r := newReplica(t, srv, short)
	// Written after the start's scans, which would hand it on as a
	// notice and open t before the first call.
	r.store.WaitScans()
	if err := r.conn.Client.Set(context.Background(), r.conn.Key("brk:open:t"), "elsewhere", time.Minute).Err(); err != nil {
		t.Fatal(err)
	}
	b := r.set.For("t")
	trip(t, b, 1)
	r.await(t, "t closed→open")
	local := b.RetryAt()
	for time.Now().Before(local) { // until the local cool-down has passed
		time.Sleep(5 * time.Millisecond)
	}
	if _, ok := b.Allow(); ok {
		t.Fatal("a probe was admitted while Redis holds the tool open")
	}
	// The key says a minute; the breaker extends by at most its own
	// cool-down at a time, and reads the key again at its end.
	if at := b.RetryAt(); !at.After(local) || time.Until(at) > short.Cooldown {
		t.Fatalf("after the read the breaker retries at %v (%v from now), want a new cool-down of at most %v", at, time.Until(at), short.Cooldown)
	}
}

// With Redis stopped, an opening stays local (counted as lost), and a
// cool-down's end is decided on the replica's own state (counted).
func TestRedisDownDecidesLocally(t *testing.T) {
	srv := redistest.Start(t)
	short := breaker.Settings{Failures: 1, Cooldown: 50 * time.Millisecond, Jitter: -1}
	r := newReplica(t, srv, short)
	srv.Stop()
	b := r.set.For("t")
	trip(t, b, 1)
	r.await(t, "t closed→open")
	deadline := time.Now().Add(10 * time.Second)
	for {
		if tk, ok := b.Allow(); ok {
			if !tk.Probe() {
				t.Fatal("the first call after the cool-down is not a probe")
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no probe admitted within 10s with Redis away")
		}
		time.Sleep(5 * time.Millisecond)
	}
	if r.store.LocalDecisions() == 0 {
		t.Fatal("LocalDecisions = 0 after a cool-down ended with Redis away")
	}
	for r.store.LostOpenings() == 0 { // the publisher tries in the background
		if time.Now().After(deadline) {
			t.Fatal("LostOpenings = 0 after an opening with Redis away")
		}
		time.Sleep(5 * time.Millisecond)
	}
}
