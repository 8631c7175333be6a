package idempotency_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/toolhost/toolhost/idempotency"
)

func as(caller string) context.Context {
	return idempotency.WithCaller(context.Background(), caller)
}

// limitErr asserts that err refuses over the named bound.
func limitErr(t *testing.T, err error, limit string) *idempotency.LimitError {
	t.Helper()
	var le *idempotency.LimitError
	if !errors.As(err, &le) || !errors.Is(err, idempotency.ErrLimit) {
		t.Fatalf("err = %v, want a *LimitError", err)
	}
	if le.Limit != limit || !strings.Contains(le.Error(), "limit of "+limit+" is") {
		t.Fatalf("refused over %q (%v), want %q", le.Limit, le, limit)
	}
	return le
}

// Regression (issue 10 finding 11): each bound refuses a new key with a
// LimitError naming it, never by dropping an outcome; keys already held
// still replay; room comes back when kept outcomes expire.
func TestLimitsRefuseNewKeys(t *testing.T) {
	const ttl = 10 * time.Second
	big := make([]byte, 1000)
	tests := []struct {
		name   string
		limits idempotency.Limits
		result []byte
		fill   int // keys caller "a" can hold before the bound
		limit  string
		other  bool // whether another caller is refused too (a total bound)
	}{
		{"keys per caller", idempotency.Limits{MaxKeysPerCaller: 3}, nil, 3, "keys per caller", false},
		{"keys", idempotency.Limits{MaxKeys: 3}, nil, 3, "keys", true},
		{"bytes per caller", idempotency.Limits{MaxBytesPerCaller: 2500}, big, 2, "bytes per caller", false},
		{"bytes", idempotency.Limits{MaxBytes: 2500}, big, 2, "bytes", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				m := idempotency.NewMemoryWith(idempotency.MemoryOptions{TTL: ttl, Limits: tt.limits})
				want := idempotency.Outcome{Result: tt.result}
				for i := range tt.fill {
					c, err := m.Acquire(as("a"), fmt.Sprint("k", i), "fp")
					if err != nil || !c.Leader() {
						t.Fatalf("key %d within the bound: %v", i, err)
					}
					c.Complete(want, true)
					time.Sleep(time.Second)
				}
				_, err := m.Acquire(as("a"), "over", "fp")
				le := limitErr(t, err, tt.limit)
				if le.RetryAfter != ttl-time.Duration(tt.fill)*time.Second {
					t.Errorf("RetryAfter = %v, want when k0 expires", le.RetryAfter)
				}
				_, err = m.Acquire(as("b"), "other", "fp")
				if tt.other {
					limitErr(t, err, tt.limit)
				} else if err != nil {
					t.Errorf("another caller refused by a's bound: %v", err)
				}
				// A key already held replays: the bound is on new keys.
				c, err := m.Acquire(as("a"), "k0", "fp")
				if err != nil || c.Leader() {
					t.Fatalf("replay of a held key: %v", err)
				}
				if o, _ := c.Wait(context.Background()); string(o.Result) != string(want.Result) {
					t.Errorf("replay got %q", o.Result)
				}
				time.Sleep(le.RetryAfter) // k0 expires: room for one
				if c, err := m.Acquire(as("a"), "over", "fp"); err != nil || !c.Leader() {
					t.Errorf("after the oldest expired: %v", err)
				}
			})
		})
	}
}

// Running keys count against the bound too, and a key released without
// keeping (keep=false) frees its room at once.
func TestLimitsCountRunningKeys(t *testing.T) {
	m := idempotency.NewMemoryWith(idempotency.MemoryOptions{Limits: idempotency.Limits{MaxKeysPerCaller: 2}})
	l1, _ := m.Acquire(as("a"), "k1", "fp")
	if _, err := m.Acquire(as("a"), "k2", "fp"); err != nil {
		t.Fatal(err)
	}
	_, err := m.Acquire(as("a"), "k3", "fp")
	if le := limitErr(t, err, "keys per caller"); le.RetryAfter != 0 || strings.Contains(le.Error(), "room frees") {
		t.Errorf("all keys running, yet RetryAfter %v: %v", le.RetryAfter, le)
	}
	if c, err := m.Acquire(as("a"), "k1", "fp"); err != nil || c.Leader() {
		t.Errorf("joining a running key: %v", err) // followers take no room
	}
	l1.Complete(idempotency.Outcome{}, false)
	if _, err := m.Acquire(as("a"), "k3", "fp"); err != nil {
		t.Errorf("after a keep=false release: %v", err)
	}
	if n, _ := m.Usage("a"); n != 2 {
		t.Errorf("a holds %d keys, want 2", n)
	}
}

// A kept outcome that takes its caller over the byte bound is still kept
// (the execution ran; its replay must not be lost), and the caller's next
// new key is refused.
func TestLimitsKeepOutcomeOverBytes(t *testing.T) {
	m := idempotency.NewMemoryWith(idempotency.MemoryOptions{Limits: idempotency.Limits{MaxBytesPerCaller: 1000}})
	l, err := m.Acquire(as("a"), "k", "fp")
	if err != nil {
		t.Fatal(err)
	}
	l.Complete(idempotency.Outcome{Result: make([]byte, 5000)}, true)
	c, err := m.Acquire(as("a"), "k", "fp")
	if err != nil || c.Leader() {
		t.Fatalf("replay: %v", err)
	}
	if o, _ := c.Wait(context.Background()); len(o.Result) != 5000 {
		t.Errorf("replayed %d bytes, want 5000", len(o.Result))
	}
	if _, b := m.Usage("a"); b < 5000 {
		t.Errorf("a holds %d bytes, want the 5000-byte result counted", b)
	}
	_, err = m.Acquire(as("a"), "k2", "fp")
	limitErr(t, err, "bytes per caller")
}

// P goroutines × N iterations from C callers under tight bounds, with
// -race: every Acquire either claims, joins or is refused by a named
// bound; the bounds hold whenever a key is admitted (bytes within one
// result per running key: an outcome is charged when it completes); and once everything
// has completed and expired the store holds nothing.
func TestHammerLimits(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const (
			P        = 40
			N        = 200
			C        = 4
			perKeys  = 8
			maxKeys  = 30
			perBytes = 8_000
		)
		const ttl = time.Second
		m := idempotency.NewMemoryWith(idempotency.MemoryOptions{TTL: ttl, Limits: idempotency.Limits{
			MaxKeys: maxKeys, MaxKeysPerCaller: perKeys, MaxBytesPerCaller: perBytes, MaxBytes: 4 * perBytes}})
		var mu sync.Mutex
		refused := map[string]int{}
		var wg sync.WaitGroup
		for p := range P {
			wg.Go(func() {
				caller := fmt.Sprint("c", p%C)
				for i := range N {
					key := fmt.Sprint("k", (p*7+i)%50)
					c, err := m.Acquire(as(caller), caller+"/"+key, "fp")
					if err != nil {
						var le *idempotency.LimitError
						if !errors.As(err, &le) {
							t.Errorf("Acquire: %v", err)
							return
						}
						mu.Lock()
						refused[le.Limit]++
						mu.Unlock()
						time.Sleep(10 * time.Millisecond)
						continue
					}
					if keys, bytes := m.Usage(caller); keys > perKeys || bytes > perBytes+perKeys*3000 {
						t.Errorf("%s holds %d keys, %d bytes: over the bounds", caller, keys, bytes)
					}
					if n := m.Len(); n > maxKeys {
						t.Errorf("store holds %d keys, over %d", n, maxKeys)
					}
					if c.Leader() {
						time.Sleep(time.Millisecond)
						c.Complete(idempotency.Outcome{Result: make([]byte, i%3000)}, i%4 != 0)
					} else if _, err := c.Wait(context.Background()); err != nil {
						t.Errorf("Wait: %v", err)
					}
				}
			})
		}
		wg.Wait()
		t.Logf("refused: %v", refused)
		if len(refused) == 0 {
			t.Error("no Acquire was refused: the bounds were not exercised")
		}
		time.Sleep(ttl)
		if n := m.Len(); n != 0 {
			t.Errorf("Len = %d after every outcome expired", n)
		}
		for c := range C {
			if k, b := m.Usage(fmt.Sprint("c", c)); k != 0 || b != 0 {
				t.Errorf("c%d still holds %d keys, %d bytes", c, k, b)
			}
		}
	})
}
