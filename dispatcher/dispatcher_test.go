package dispatcher

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/toolhost/toolhost/abi"
)

func TestEnvelopeKinds(t *testing.T) {
	f := &fakeTool{script: []step{{}}}
	bad := &fakeTool{script: []step{{err: internalErr}}}
	reg := newRegistry(t,
		toolSpec{name: "ok", handler: f, schema: `{"type":"object","properties":{"n":{"type":"integer"}},"required":["n"]}`},
		toolSpec{name: "bad", handler: bad})
	d := New(reg, Config{})
	cases := []struct {
		name     string
		call     Call
		kind     Kind
		code     int
		attempts int
		sentinel error
	}{
		{"unknown tool", Call{Tool: "nope"}, KindNotFound, -32601, 0, ErrNotFound},
		{"schema violation", Call{Tool: "ok", Args: json.RawMessage(`{"n":"x"}`)}, KindSchema, -32602, 0, ErrSchema},
		{"missing required", Call{Tool: "ok", Args: json.RawMessage(`{}`)}, KindSchema, -32602, 0, ErrSchema},
		{"not JSON", Call{Tool: "ok", Args: json.RawMessage(`{`)}, KindSchema, -32602, 0, ErrSchema},
		{"budget zero", Call{Tool: "ok", Args: json.RawMessage(`{"n":1}`), Options: Options{Budget: intp(0)}}, KindBudgetExceeded, -32603, 0, ErrBudgetExceeded},
		{"guest internal", Call{Tool: "bad"}, KindInternal, -32603, 1, ErrInternal},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := d.Call(context.Background(), tc.call)
			de := asDispatchError(t, err)
			if de.Kind != tc.kind || de.JSONRPCCode != tc.code || de.Attempts != tc.attempts {
				t.Fatalf("got %+v, want kind %s code %d attempts %d", de, tc.kind, tc.code, tc.attempts)
			}
			if !errors.Is(err, tc.sentinel) {
				t.Fatalf("errors.Is(%v, %v) = false", err, tc.sentinel)
			}
		})
	}
	if n := f.calls.Load(); n != 0 {
		t.Fatalf("handler ran %d times for calls that must fail before any attempt", n)
	}
}

func TestSchemaErrorPointsAtPath(t *testing.T) {
	reg := newRegistry(t, toolSpec{name: "t", handler: &fakeTool{script: []step{{}}},
		schema: `{"type":"object","properties":{"a":{"type":"object","properties":{"b":{"type":"integer"}}}}}`})
	_, err := New(reg, Config{}).Call(context.Background(), Call{Tool: "t", Args: json.RawMessage(`{"a":{"b":"no"}}`)})
	de := asDispatchError(t, err)
	if want := "at /a/b:"; !contains(de.Message, want) {
		t.Fatalf("message %q does not point at %q", de.Message, want)
	}
}

func TestTimeoutPerAttempt(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := &fakeTool{script: []step{{block: true}}}
		reg := newRegistry(t, toolSpec{name: "slow", timeout: 2 * time.Second, handler: f})
		d := New(reg, Config{})
		for _, tc := range []struct {
			name string
			opt  time.Duration
			want time.Duration
		}{{"tool default", 0, 2 * time.Second}, {"caller override", 150 * time.Millisecond, 150 * time.Millisecond}} {
			start := time.Now()
			_, err := d.Call(context.Background(), Call{Tool: "slow", Options: Options{Timeout: tc.opt}})
			de := asDispatchError(t, err)
			if de.Kind != KindTimeout || de.Attempts != 1 {
				t.Fatalf("%s: got %+v, want timeout after 1 attempt (not idempotent: no retry)", tc.name, de)
			}
			if took := time.Since(start); took != tc.want {
				t.Fatalf("%s: timed out after %v, want exactly %v", tc.name, took, tc.want)
			}
		}
	})
}

func TestRetrySchedule(t *testing.T) {
	cases := []struct {
		name       string
		idempotent bool
		script     []step
		u          float64
		wantKind   Kind // "" = success
		attempts   int
		took       time.Duration
	}{
		{"transient twice then ok", false, []step{{err: transient(0)}, {err: transient(0)}, {}}, 0.5, "", 3,
			125*time.Millisecond + 500*time.Millisecond},
		{"jitter at zero", false, []step{{err: transient(0)}, {}}, 0, "", 2, 100 * time.Millisecond},
		{"jitter at its top", false, []step{{err: transient(0)}, {}}, 0.999999, "", 2, 149999950 * time.Nanosecond},
		{"transient three times", false, []step{{err: transient(0)}}, 0, KindTransient, 3, 500 * time.Millisecond},
		{"retry_after stretches the delay", false, []step{{err: transient(2000)}, {}}, 0, "", 2, 2 * time.Second},
		{"retry_after is capped", false, []step{{err: transient(60000)}, {}}, 0, "", 2, 10 * time.Second},
		{"internal is never retried", true, []step{{err: internalErr}}, 0, KindInternal, 1, 0},
		{"guest schema is never retried", true, []step{{err: &abiSchema}}, 0, KindSchema, 1, 0},
		{"timeout retried when idempotent", true, []step{{block: true}, {}}, 0, "", 2, time.Second + 100*time.Millisecond},
		{"timeout not retried when not idempotent", false, []step{{block: true}, {}}, 0, KindTimeout, 1, time.Second},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				f := &fakeTool{script: tc.script}
				reg := newRegistry(t, toolSpec{name: "t", idempotent: tc.idempotent, handler: f})
				d := New(reg, Config{Rand: fixedRand(tc.u)})
				start := time.Now()
				_, err := d.Call(context.Background(), Call{Tool: "t"})
				took := time.Since(start)
				if tc.wantKind == "" {
					if err != nil {
						t.Fatalf("unexpected error %v", err)
					}
				} else {
					de := asDispatchError(t, err)
					if de.Kind != tc.wantKind || de.Attempts != tc.attempts {
						t.Fatalf("got %+v, want %s after %d attempts", de, tc.wantKind, tc.attempts)
					}
				}
				if int(f.calls.Load()) != tc.attempts {
					t.Fatalf("handler ran %d times, want %d", f.calls.Load(), tc.attempts)
				}
				if took != tc.took {
					t.Fatalf("took %v, want exactly %v", took, tc.took)
				}
			})
		})
	}
}

func TestNoRetryPastCallerDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := &fakeTool{script: []step{{err: transient(0)}, {}}}
		d := New(newRegistry(t, toolSpec{name: "t", handler: f}), Config{Rand: fixedRand(0)})
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		defer cancel()
		start := time.Now()
		_, err := d.Call(ctx, Call{Tool: "t"})
		de := asDispatchError(t, err)
		if de.Kind != KindTransient || de.Attempts != 1 || f.calls.Load() != 1 {
			t.Fatalf("got %+v after %d calls, want the transient error of attempt 1 and no retry", de, f.calls.Load())
		}
		if time.Since(start) != 0 {
			t.Fatalf("waited %v before giving up; a retry that cannot fit must not be waited for", time.Since(start))
		}
	})
}

func TestBudget(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := &fakeTool{script: []step{{err: transient(0)}}}
		d := New(newRegistry(t, toolSpec{name: "t", handler: f}), Config{Rand: fixedRand(0)})
		_, err := d.Call(context.Background(), Call{Tool: "t", Options: Options{Budget: intp(2)}})
		de := asDispatchError(t, err)
		if de.Kind != KindBudgetExceeded || de.Attempts != 2 || f.calls.Load() != 2 {
			t.Fatalf("got %+v after %d calls, want budget_exceeded after exactly 2 attempts", de, f.calls.Load())
		}
		// A budget larger than the retry cap is not what ends the call.
		f2 := &fakeTool{script: []step{{err: transient(0)}}}
		d2 := New(newRegistry(t, toolSpec{name: "t", handler: f2}), Config{Rand: fixedRand(0)})
		_, err = d2.Call(context.Background(), Call{Tool: "t", Options: Options{Budget: intp(10)}})
		if de := asDispatchError(t, err); de.Kind != KindTransient || de.Attempts != 3 {
			t.Fatalf("got %+v, want transient after 3 attempts", de)
		}
	})
}

var abiSchema = abi.Error{Kind: abi.KindSchema, Message: "bad input"}

func contains(s, sub string) bool { return len(sub) == 0 || indexOf(s, sub) >= 0 }

func indexOf(s, sub string) int {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return i
		}
	}
	return -1
}
