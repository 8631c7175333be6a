package idempotency_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/toolhost/toolhost/idempotency"
)

func acquire(t *testing.T, m *idempotency.Memory, key, fp string) idempotency.Claim {
	t.Helper()
	c, err := m.Acquire(context.Background(), key, fp)
	if err != nil {
		t.Fatalf("Acquire(%q, %q): %v", key, fp, err)
	}
	return c
}

func leader(t *testing.T, m *idempotency.Memory, key, fp string) idempotency.Claim {
	t.Helper()
	c := acquire(t, m, key, fp)
	if !c.Leader() {
		t.Fatalf("Acquire(%q) is a follower, want the leader", key)
	}
	return c
}

func follower(t *testing.T, m *idempotency.Memory, key, fp string) idempotency.Claim {
	t.Helper()
	c := acquire(t, m, key, fp)
	if c.Leader() {
		t.Fatalf("Acquire(%q) leads, want a follower", key)
	}
	return c
}

func sameOutcome(a, b idempotency.Outcome) bool {
	return string(a.Result) == string(b.Result) && a.Err == b.Err && a.Attempts == b.Attempts
}

func TestLeaderFollower(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m := idempotency.NewMemory(0)
		l := leader(t, m, "k", "fp")
		f1 := follower(t, m, "k", "fp")
		f2 := follower(t, m, "k", "fp")
		if n := m.Len(); n != 1 {
			t.Errorf("Len = %d, want 1", n)
		}

		got := make(chan idempotency.Outcome, 2)
		for _, f := range []idempotency.Claim{f1, f2} {
			go func() {
				o, err := f.Wait(context.Background())
				if err != nil {
					t.Errorf("Wait: %v", err)
				}
				got <- o
			}()
		}
		synctest.Wait()
		if len(got) != 0 {
			t.Fatal("a follower's Wait returned before the leader completed")
		}

		want := idempotency.Outcome{Result: []byte(`{"n":1}`), Attempts: 2}
		l.Complete(want, true)
		for range 2 {
			if o := <-got; !sameOutcome(o, want) {
				t.Errorf("follower got %+v, want %+v", o, want)
			}
		}
		if o, err := l.Wait(context.Background()); err != nil || !sameOutcome(o, want) {
			t.Errorf("leader's Wait after Complete = %+v, %v", o, err)
		}
		// A later caller replays without waiting.
		late := follower(t, m, "k", "fp")
		if o, err := late.Wait(context.Background()); err != nil || !sameOutcome(o, want) {
			t.Errorf("replay = %+v, %v", o, err)
		}
	})
}

// The outcome's error is kept as the value the execution returned.
func TestWaitReturnsLeadersError(t *testing.T) {
	m := idempotency.NewMemory(0)
	l := leader(t, m, "k", "fp")
	f := follower(t, m, "k", "fp")
	boom := errors.New("boom")
	l.Complete(idempotency.Outcome{Err: boom, Attempts: 3}, true)
	o, err := f.Wait(context.Background())
	if err != nil {
		t.Fatalf("Wait: %v", err)
	}
	if o.Err != boom || o.Result != nil || o.Attempts != 3 {
		t.Errorf("outcome %+v, want the leader's error", o)
	}
}

func TestConflict(t *testing.T) {
	tests := []struct {
		name  string
		setup func(m *idempotency.Memory) // leaves "key-1" held with fingerprint "a"
	}{
		{"while running", func(m *idempotency.Memory) {
			m.Acquire(context.Background(), "key-1", "a")
		}},
		{"while kept", func(m *idempotency.Memory) {
			c, _ := m.Acquire(context.Background(), "key-1", "a")
			c.Complete(idempotency.Outcome{Result: []byte("1")}, true)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := idempotency.NewMemory(0)
			tt.setup(m)
			c, err := m.Acquire(context.Background(), "key-1", "b")
			if err == nil {
				t.Fatalf("different fingerprint accepted (leader %v)", c.Leader())
			}
			if c != nil {
				t.Errorf("conflict returned a claim %v", c)
			}
			if !errors.Is(err, idempotency.ErrConflict) {
				t.Errorf("errors.Is(%v, ErrConflict) = false", err)
			}
			var ce *idempotency.ConflictError
			if !errors.As(err, &ce) || ce.Key != "key-1" {
				t.Errorf("errors.As: %#v", err)
			}
			if !strings.Contains(err.Error(), `"key-1"`) {
				t.Errorf("message %q does not name the key", err)
			}
			// The holder is undisturbed, and other keys are free.
			follower(t, m, "key-1", "a")
			leader(t, m, "key-2", "b")
		})
	}
}

func TestConflictErrorIs(t *testing.T) {
	err := error(&idempotency.ConflictError{Key: "k"})
	if !errors.Is(err, idempotency.ErrConflict) {
		t.Error("ConflictError is not ErrConflict")
	}
	if errors.Is(err, context.Canceled) || errors.Is(errors.New("x"), idempotency.ErrConflict) {
		t.Error("Is matches too much")
	}
}

func TestKeepFalseFreesKeyAtOnce(t *testing.T) {
	m := idempotency.NewMemory(0)
	l := leader(t, m, "k", "fp")
	f := follower(t, m, "k", "fp")
	want := idempotency.Outcome{Err: errors.New("transient")}
	l.Complete(want, false)
	if n := m.Len(); n != 0 {
		t.Errorf("Len = %d after Complete(keep=false), want 0", n)
	}
	// The follower that joined still gets the outcome...
	if o, err := f.Wait(context.Background()); err != nil || !sameOutcome(o, want) {
		t.Errorf("joined follower got %+v, %v", o, err)
	}
	// ...and the next caller runs anew, with any fingerprint.
	l2 := leader(t, m, "k", "other")
	// The first leader's second Complete must not free the new leader's key.
	l.Complete(idempotency.Outcome{}, false)
	if n := m.Len(); n != 1 {
		t.Errorf("Len = %d after a stale Complete, want 1", n)
	}
	follower(t, m, "k", "other")
	l2.Complete(idempotency.Outcome{}, false)
}

func TestKeepTrueReplaysUntilTTL(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const ttl = 10 * time.Second
		m := idempotency.NewMemory(ttl)
		l := leader(t, m, "k", "fp")
		time.Sleep(5 * time.Second) // a long execution: the TTL counts from Complete
		want := idempotency.Outcome{Result: []byte("42")}
		l.Complete(want, true)

		time.Sleep(ttl - time.Nanosecond)
		f := follower(t, m, "k", "fp")
		if o, _ := f.Wait(context.Background()); !sameOutcome(o, want) {
			t.Errorf("replay just before the TTL = %+v", o)
		}
		if _, err := m.Acquire(context.Background(), "k", "other"); !errors.Is(err, idempotency.ErrConflict) {
			t.Errorf("other fingerprint just before the TTL: %v, want a conflict", err)
		}

		time.Sleep(time.Nanosecond) // exactly the TTL: expired
		l2 := leader(t, m, "k", "other")
		if n := m.Len(); n != 1 {
			t.Errorf("Len = %d, want 1", n)
		}
		l2.Complete(idempotency.Outcome{}, true)
	})
}

func TestDefaultTTL(t *testing.T) {
	for _, ttl := range []time.Duration{0, -time.Second} {
		synctest.Test(t, func(t *testing.T) {
			m := idempotency.NewMemory(ttl)
			leader(t, m, "k", "fp").Complete(idempotency.Outcome{}, true)
			time.Sleep(idempotency.DefaultTTL - time.Millisecond)
			follower(t, m, "k", "fp")
			time.Sleep(time.Millisecond)
			leader(t, m, "k", "fp")
		})
	}
}

// Regression (issue 10 finding 11): kept outcomes leave the store when
// they expire, with no call needed to sweep them (they used to stay until
// an Acquire swept, at most twice per TTL).
func TestExpiredEvictedEagerly(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const ttl = 10 * time.Second
		m := idempotency.NewMemory(ttl)
		for _, k := range []string{"a", "b", "c"} {
			leader(t, m, k, "fp").Complete(idempotency.Outcome{Result: []byte("1234")}, true)
			time.Sleep(time.Second)
		}
		running := leader(t, m, "running", "fp") // never expires while it runs
		freed := leader(t, m, "freed", "fp")
		freed.Complete(idempotency.Outcome{}, false)
		if n := m.Len(); n != 4 {
			t.Fatalf("Len = %d, want 4", n)
		}

		time.Sleep(ttl - 3*time.Second + time.Millisecond) // a expired, b and c not yet
		if n := m.Len(); n != 3 {
			t.Errorf("Len = %d at a's expiry, want 3 (b, c, running)", n)
		}
		time.Sleep(2 * time.Second)
		if n := m.Len(); n != 1 {
			t.Errorf("Len = %d after every TTL, no call made, want 1 (running)", n)
		}
		follower(t, m, "running", "fp")
		running.Complete(idempotency.Outcome{}, true)
		time.Sleep(ttl + time.Millisecond)
		if n, b := m.Usage(""); m.Len() != 0 || n != 0 || b != 0 {
			t.Errorf("after all expired: Len %d, usage %d keys %d bytes; want all 0", m.Len(), n, b)
		}
	})
}

func TestCompleteTwiceIsHarmless(t *testing.T) {
	m := idempotency.NewMemory(0)
	l := leader(t, m, "k", "fp")
	first := idempotency.Outcome{Result: []byte("first")}
	l.Complete(first, true)
	l.Complete(idempotency.Outcome{Result: []byte("second")}, false) // no panic, no effect
	if n := m.Len(); n != 1 {
		t.Errorf("Len = %d, want the kept outcome", n)
	}
	if o, _ := follower(t, m, "k", "fp").Wait(context.Background()); !sameOutcome(o, first) {
		t.Errorf("outcome %+v, want the first", o)
	}
}

func TestFollowerCompletePanics(t *testing.T) {
	m := idempotency.NewMemory(0)
	l := leader(t, m, "k", "fp")
	f := follower(t, m, "k", "fp")
	func() {
		defer func() {
			r := recover()
			if r == nil {
				t.Fatal("a follower's Complete did not panic")
			}
			if s, _ := r.(string); !strings.Contains(s, "Complete") {
				t.Errorf("panic value %v", r)
			}
		}()
		f.Complete(idempotency.Outcome{Result: []byte("hijack")}, true)
	}()
	// The execution is still the leader's.
	l.Complete(idempotency.Outcome{Result: []byte("real")}, true)
	if o, _ := f.Wait(context.Background()); string(o.Result) != "real" {
		t.Errorf("outcome %q", o.Result)
	}
}

func TestWaitHonoursContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m := idempotency.NewMemory(0)
		l := leader(t, m, "k", "fp")
		f := follower(t, m, "k", "fp")

		cancelled, cancel := context.WithCancel(context.Background())
		cancel()
		if _, err := f.Wait(cancelled); !errors.Is(err, context.Canceled) {
			t.Errorf("Wait with a cancelled context = %v", err)
		}
		if _, err := l.Wait(cancelled); !errors.Is(err, context.Canceled) {
			t.Errorf("leader's Wait with a cancelled context = %v", err)
		}

		ctx, cancel2 := context.WithTimeout(context.Background(), 3*time.Second)
		defer cancel2()
		t0 := time.Now()
		o, err := f.Wait(ctx)
		if !errors.Is(err, context.DeadlineExceeded) || o.Result != nil || o.Err != nil {
			t.Errorf("Wait past the deadline = %+v, %v", o, err)
		}
		if el := time.Since(t0); el != 3*time.Second {
			t.Errorf("Wait gave up after %v, want 3s", el)
		}

		// Giving up does not lose the outcome.
		l.Complete(idempotency.Outcome{Result: []byte("late")}, true)
		if o, err := f.Wait(context.Background()); err != nil || string(o.Result) != "late" {
			t.Errorf("Wait after Complete = %+v, %v", o, err)
		}
		// With both the outcome and a dead context ready either answer is
		// allowed, but an outcome returned must be the right one.
		if o, err := f.Wait(cancelled); err == nil && string(o.Result) != "late" {
			t.Errorf("Wait = %+v", o)
		}
	})
}

// Memory is a Store.
var _ idempotency.Store = (*idempotency.Memory)(nil)
