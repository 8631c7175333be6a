package dispatcher

import (
	"context"
	"encoding/json"
	"errors"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/toolhost/toolhost/governor"
	"github.com/toolhost/toolhost/registry"
)

type fakeGovernor struct {
	err               error
	tool, pri, caller string
}

type govKey struct{}

func (f *fakeGovernor) Admit(ctx context.Context, tool, priority, caller string) (context.Context, error) {
	f.tool, f.pri, f.caller = tool, priority, caller
	return context.WithValue(ctx, govKey{}, "admitted"), f.err
}

// The governor step runs after the breaker and before any attempt: its
// refusal is the call's envelope, and what it puts in the context reaches
// the handler.
func TestGovernorStep(t *testing.T) {
	var seen any
	h := registry.HandlerFunc(func(ctx context.Context, _ json.RawMessage) (json.RawMessage, error) {
		seen = ctx.Value(govKey{})
		return json.RawMessage(`1`), nil
	})
	reg := newRegistry(t, toolSpec{name: "gh.search", handler: h})
	tests := []struct {
		name  string
		err   error
		kind  Kind
		code  int
		retry int64
	}{
		{"admitted", nil, "", 0, 0},
		{"rate limited", &governor.LimitError{Quota: "gh", Reason: "busy", RetryAfter: 1500 * time.Millisecond}, KindRateLimited, -32603, 1500},
		{"bad priority", errors.Join(governor.ErrInvalid, errors.New("priority \"x\"")), KindSchema, -32602, 0},
		{"store down", errors.New("redis: connection refused"), KindInternal, -32603, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			seen = nil
			g := &fakeGovernor{err: tc.err}
			d := New(reg, Config{Governor: g})
			_, err := d.Call(context.Background(), Call{Tool: "gh.search", Options: Options{Priority: "interactive", Caller: "triage-3"}})
			if g.tool != "gh.search" || g.pri != "interactive" || g.caller != "triage-3" {
				t.Fatalf("Admit saw tool %q priority %q caller %q", g.tool, g.pri, g.caller)
			}
			if tc.err == nil {
				if err != nil || seen != "admitted" {
					t.Fatalf("err %v, handler saw %v", err, seen)
				}
				return
			}
			de := asDispatchError(t, err)
			if de.Kind != tc.kind || de.JSONRPCCode != tc.code || de.RetryAfterMS != tc.retry || de.Attempts != 0 {
				t.Fatalf("envelope %+v, want kind %s code %d retry %d, no attempts", de, tc.kind, tc.code, tc.retry)
			}
			if seen != nil {
				t.Fatal("the handler ran after the governor refused")
			}
		})
	}
}

// With the real governor: a tool drawing on an exhausted quota fails fast
// with rate_limited instead of waiting past the caller's deadline.
func TestGovernorRateLimited(t *testing.T) {
	g, err := governor.New(governor.Config{Broadcast: -1, Quotas: []governor.Quota{
		{Name: "gh", Capacity: 1, Interval: time.Minute, Burst: 1, Tools: map[string]int64{"gh.search": 1}}}})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	reg := newRegistry(t, toolSpec{name: "gh.search", handler: &fakeTool{script: []step{{}}}})
	d := New(reg, Config{Governor: g})
	if _, err := d.Call(context.Background(), Call{Tool: "gh.search"}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	start := time.Now()
	_, err = d.Call(ctx, Call{Tool: "gh.search"})
	if !errors.Is(err, ErrRateLimited) || time.Since(start) > 100*time.Millisecond {
		t.Fatalf("err %v after %v, want rate_limited at once", err, time.Since(start))
	}
	if de := asDispatchError(t, err); de.RetryAfterMS < 59000 {
		t.Fatalf("retry_after_ms %d, want about a minute", de.RetryAfterMS)
	}
}

// countingGov counts the real governor's admissions.
type countingGov struct {
	*governor.Governor
	admits atomic.Int32
}

func (c *countingGov) Admit(ctx context.Context, tool, priority, caller string) (context.Context, error) {
	c.admits.Add(1)
	return c.Governor.Admit(ctx, tool, priority, caller)
}

func newCountingGov(t *testing.T, capacity int64) *countingGov {
	t.Helper()
	g, err := governor.New(governor.Config{Broadcast: -1, Quotas: []governor.Quota{
		{Name: "gh", Capacity: capacity, Interval: time.Hour, Burst: capacity, Tools: map[string]int64{"gh.search": 1}}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(g.Close)
	return &countingGov{Governor: g}
}

// The governor draws per attempt, after idempotency: every attempt that
// goes to the tool draws, retries included; a replayed key draws nothing,
// nor does a caller that joins a keyed execution in flight.
func TestGovernorDrawsPerAttemptAfterIdempotency(t *testing.T) {
	t.Run("retries draw", func(t *testing.T) {
		g := newCountingGov(t, 10)
		f := &fakeTool{script: []step{{err: transient(0)}, {err: transient(0)}, {}}}
		d := New(newRegistry(t, toolSpec{name: "gh.search", handler: f}), Config{Governor: g, Rand: fixedRand(0),
			Retry: RetryPolicy{Delays: []time.Duration{time.Microsecond}}})
		if o := d.Do(context.Background(), Call{Tool: "gh.search"}); o.Err != nil || o.Attempts != 3 {
			t.Fatalf("outcome %+v", o)
		}
		if n := g.admits.Load(); n != 3 {
			t.Fatalf("%d draws for 3 attempts", n)
		}
	})
	t.Run("a retry past the quota is rate limited", func(t *testing.T) {
		g := newCountingGov(t, 1)
		f := &fakeTool{script: []step{{err: transient(0)}, {}}}
		d := New(newRegistry(t, toolSpec{name: "gh.search", handler: f}), Config{Governor: g, Rand: fixedRand(0),
			Retry: RetryPolicy{Delays: []time.Duration{time.Microsecond}}})
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		o := d.Do(ctx, Call{Tool: "gh.search"})
		if o.Err == nil || o.Err.Kind != KindRateLimited || o.Attempts != 1 || f.calls.Load() != 1 {
			t.Fatalf("outcome %+v after %d runs; want rate_limited after the 1 attempt the quota paid for", o.Err, f.calls.Load())
		}
	})
	t.Run("replay draws nothing", func(t *testing.T) {
		g := newCountingGov(t, 1)
		f := &fakeTool{script: []step{{}}}
		d := New(newRegistry(t, toolSpec{name: "gh.search", handler: f}), Config{Governor: g})
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		for i := range 3 {
			if _, err := d.Call(ctx, Call{Tool: "gh.search", Options: Options{IdempotencyKey: "k"}}); err != nil {
				t.Fatalf("call %d: %v (a replay must not need quota)", i, err)
			}
		}
		if n, runs := g.admits.Load(), f.calls.Load(); n != 1 || runs != 1 {
			t.Fatalf("%d draws, %d runs; want 1 and 1", n, runs)
		}
	})
	t.Run("joined waiter draws nothing", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			g := newCountingGov(t, 1)
			release := make(chan struct{})
			h := registry.HandlerFunc(func(ctx context.Context, _ json.RawMessage) (json.RawMessage, error) {
				<-release
				return json.RawMessage(`1`), nil
			})
			d := New(newRegistry(t, toolSpec{name: "gh.search", handler: h}), Config{Governor: g})
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			errs := make(chan error, 4)
			for range 4 {
				go func() {
					_, err := d.Call(ctx, Call{Tool: "gh.search", Options: Options{IdempotencyKey: "k"}})
					errs <- err
				}()
			}
			synctest.Wait() // the leader runs, the others have joined
			close(release)
			for range 4 {
				if err := <-errs; err != nil {
					t.Fatal(err)
				}
			}
			if n := g.admits.Load(); n != 1 {
				t.Fatalf("%d draws for one execution shared by 4 callers", n)
			}
		})
	})
}
