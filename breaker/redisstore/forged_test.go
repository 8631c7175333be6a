package redisstore_test

import (
	"context"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/toolhost/toolhost/breaker"
	"github.com/toolhost/toolhost/internal/testkit/redistest"
)

// served is the replicas' tools in these tests: t and u, nothing else.
func served(tool string) bool { return tool == "t" || tool == "u" }

// publish sends payload on the breaker channel as any Redis client can.
func publish(t *testing.T, r *replica, payload string) {
	t.Helper()
	if err := r.conn.Client.Publish(context.Background(), r.conn.Key("brk:opened"), payload).Err(); err != nil {
		t.Fatal(err)
	}
}

// Issue 27 item 2: messages anyone with PUBLISH can send (a duration
// until 2058, durations that overflow time.Duration, tools no replica
// serves, 500 made-up names, garbage) open nothing and create no breaker.
// A real opening of u on another replica, published after them, is the
// marker: notices are passed on in order, so once A has opened u, A has
// handled every forged message before it.
func TestForgedNoticesDoNothing(t *testing.T) {
	srv := redistest.Start(t)
	a, b := newServing(t, srv, minute, served), newServing(t, srv, minute, served)
	forged := []string{
		"mallory\n1000000000000\nt",  // until 2058: the reproduction, with no key behind it
		"mallory\n20000000000000\nt", // × 1 ms wraps time.Duration to ~49 years
		"mallory\n9300000000000\nt",  // × 1 ms wraps negative
		"mallory\n60000\nmade-up",    // a tool no replica serves
		"garbage",
		"mallory\n60000\n" + strings.Repeat("x", 200), // not a tool name
		"mallory\n60000\nt\nu",                        // not a tool name either
	}
	for i := range 500 {
		forged = append(forged, fmt.Sprintf("mallory\n1000000000000\nmade-up-%d", i))
	}
	for _, p := range forged {
		publish(t, a, p)
	}
	trip(t, b.set.For("u"), 2)
	b.await(t, "u closed→open")
	a.await(t, "u closed→open")
	if n := a.set.Len(); n != 1 {
		t.Fatalf("A holds %d breakers after the forged messages, want 1 (u): made-up names got breakers", n)
	}
	select {
	case c := <-a.changes:
		t.Fatalf("a forged message made transition %q", c)
	default:
	}
	if st := a.set.For("t").State(); st != breaker.Closed {
		t.Fatalf("t after forged openings with no key in Redis: %v, want closed", st)
	}
	if n := a.store.DroppedNotices(); n < 3 {
		t.Fatalf("DroppedNotices = %d, want the 3 malformed messages counted", n)
	}
}

// A forged key (SET with a PX of 31,000 years) and a message claiming
// 2058 open a served tool for its own cool-down at most: the key is what
// decides, within the tool's bound.
func TestForgedKeyOpensForTheToolsCooldownAtMost(t *testing.T) {
	srv := redistest.Start(t)
	a := newServing(t, srv, minute, served)
	ctx := context.Background()
	// Taken before the SET: the resync that follows the subscription
	// (OnOpened) may find the key and open t before the notice arrives.
	before := time.Now()
	if err := a.conn.Client.Do(ctx, "SET", a.conn.Key("brk:open:t"), "mallory", "PX", "1000000000000000").Err(); err != nil {
		t.Fatal(err)
	}
	publish(t, a, "mallory\n1000000000000\nt")
	a.await(t, "t closed→open")
	if end := a.set.For("t").RetryAt(); end.After(time.Now().Add(minute.Cooldown)) || end.Before(before.Add(minute.Cooldown)) {
		t.Fatalf("t opened until %v (%v from now), want the tool's cool-down, %v", end, time.Until(end), minute.Cooldown)
	}
}

// PTTL is read as the integer Redis sends and range-checked: a key set
// with a PX beyond time.Duration's range (292 years, 9.2e12 ms) saturates
// instead of wrapping (go-redis's PTTL wraps 9.3e12 ms negative, and
// 2e13 ms to about 49 years); a key without expiry (not one toolhost
// writes) or with none at all is nothing open.
func TestRemainingIsRangeChecked(t *testing.T) {
	srv := redistest.Start(t)
	r := newReplica(t, srv, minute)
	ctx := context.Background()
	for _, px := range []string{"9300000000000", "20000000000000", "1000000000000000"} {
		if err := r.conn.Client.Do(ctx, "SET", r.conn.Key("brk:open:t"), "x", "PX", px).Err(); err != nil {
			t.Fatal(err)
		}
		d, err := r.store.Remaining("t")
		if err != nil || d != math.MaxInt64 {
			t.Fatalf("PX %s: Remaining = %v, %v; want the largest Duration", px, d, err)
		}
	}
	if err := r.conn.Client.Set(ctx, r.conn.Key("brk:open:t"), "x", 0).Err(); err != nil {
		t.Fatal(err)
	}
	if d, err := r.store.Remaining("t"); err != nil || d != 0 {
		t.Fatalf("a key without expiry: Remaining = %v, %v; want 0", d, err)
	}
	if d, err := r.store.Remaining("gone"); err != nil || d != 0 {
		t.Fatalf("no key: Remaining = %v, %v; want 0", d, err)
	}
}
