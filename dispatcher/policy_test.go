package dispatcher

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/toolhost/toolhost/abi"
	"github.com/toolhost/toolhost/breaker"
	"github.com/toolhost/toolhost/internal/attempt"
	"github.com/toolhost/toolhost/registry"
)

// refusedErr stands for toolhostv1.EgressRefusedError: the guest's own error,
// after the host refused one of its egress requests.
type refusedErr struct{ err error }

func (e refusedErr) Error() string                   { return e.err.Error() }
func (e refusedErr) Unwrap() error                   { return e.err }
func (e refusedErr) EgressRefusal() *abi.EgressError { return &abi.EgressError{Kind: abi.EgressDenied} }

// A client that asks a granted tool for URLs its grant does not allow
// makes it fail, but cannot open its breaker: the denial is the caller's
// doing. The same failures without a refusal do open it.
func TestEgressRefusalDoesNotTripBreaker(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
		open bool
	}{
		{"refused", refusedErr{internalErr}, false},
		{"own failure", internalErr, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := &fakeTool{script: []step{{err: tc.err}}}
			d := New(newRegistry(t, toolSpec{name: "t", handler: f}), Config{Breaker: breaker.Settings{Failures: 2}})
			for range 5 {
				if _, err := d.Call(context.Background(), Call{Tool: "t"}); !errors.Is(err, ErrInternal) && !errors.Is(err, ErrCircuitOpen) {
					t.Fatalf("got %v, want internal", err)
				}
			}
			if open := d.breakers.For("t").State() == breaker.Open; open != tc.open {
				t.Fatalf("breaker open: %v, want %v", open, tc.open)
			}
		})
	}
}

// A caller's timeout shortens a tool's, and lengthens it only as far as
// the operator's MaxTimeout allows: before, timeout_ms let any caller hold
// a slot for as long as it liked. A capped caller is told so, and by
// which setting: before, the envelope named only the cap.
func TestCallerCannotLengthenTimeout(t *testing.T) {
	for _, tc := range []struct {
		name       string
		maxTimeout time.Duration
		caller     time.Duration
		took       time.Duration // until the attempt ended
		err        error
		capped     *TimeoutCap
		says       string
	}{
		{"longer is capped", 0, time.Hour, 100 * time.Millisecond, ErrTimeout,
			&TimeoutCap{RequestedMS: 3600000, TimeoutMS: 100, By: CapToolTimeout},
			`; the caller's timeout_ms 3600000 was capped at 100 by the tool's timeout (its manifest's timeout_ms or [tools."t"] timeout; max_timeout there lets callers ask for more)`},
		{"shorter applies", 0, 10 * time.Millisecond, 10 * time.Millisecond, ErrTimeout, nil, ""},
		{"operator allows more", time.Second, time.Hour, time.Second, ErrTimeout,
			&TimeoutCap{RequestedMS: 3600000, TimeoutMS: 1000, By: CapMaxTimeout},
			`; the caller's timeout_ms 3600000 was capped at 1000 by [tools."t"] max_timeout`},
		{"max below the tool's own", 10 * time.Millisecond, time.Hour, 100 * time.Millisecond, ErrTimeout,
			&TimeoutCap{RequestedMS: 3600000, TimeoutMS: 100, By: CapToolTimeout}, "by the tool's timeout"},
		{"within the allowance", time.Hour, 2 * time.Second, 2 * time.Second, nil, nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				f := &fakeTool{script: []step{{hold: 2 * time.Second}}}
				d := New(newRegistry(t, toolSpec{name: "t", timeout: 100 * time.Millisecond, handler: f}),
					Config{Tools: map[string]ToolPolicy{"t": {MaxTimeout: tc.maxTimeout}}})
				start := time.Now()
				_, err := d.Call(context.Background(), Call{Tool: "t", Options: Options{Timeout: tc.caller}})
				if took := time.Since(start); took != tc.took || (tc.err == nil) != (err == nil) || err != nil && !errors.Is(err, tc.err) {
					t.Fatalf("err %v after %v; want %v after %v", err, took, tc.err, tc.took)
				}
				if err == nil {
					return
				}
				de := asDispatchError(t, err)
				if !reflect.DeepEqual(de.TimeoutCapped, tc.capped) || !strings.Contains(de.Message, tc.says) {
					t.Fatalf("envelope %+v (timeout_capped %+v); want timeout_capped %+v and a message saying %q", de, de.TimeoutCapped, tc.capped, tc.says)
				}
				if tc.capped == nil && strings.Contains(de.Message, "capped") {
					t.Fatalf("message %q speaks of a cap that was not applied", de.Message)
				}
			})
		})
	}
}

// A timeout the host used up (the guest had under half of the attempt:
// the rest went to waiting for CPU or instantiating under load) is not the
// tool's failure; one whose guest ran out the clock is. In TestSoak on a
// loaded machine, starved timeouts of the cheapest tool shut it for 30 s.
func TestHostStarvedTimeoutDoesNotTripBreaker(t *testing.T) {
	for _, tc := range []struct {
		name  string
		guest time.Duration // of the 100 ms attempt, the rest is host wait
		open  bool
	}{
		{"host starved", 10 * time.Millisecond, false},
		{"guest slow", 60 * time.Millisecond, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				// What host.Module.Call does: enter, wait (for CPU, an
				// instance), run the guest for its share.
				h := registry.HandlerFunc(func(ctx context.Context, _ json.RawMessage) (json.RawMessage, error) {
					st := attempt.From(ctx)
					st.Enter()
					deadline, _ := ctx.Deadline()
					time.Sleep(time.Until(deadline) - tc.guest)
					st.AddGuest(tc.guest)
					<-ctx.Done()
					return nil, ctx.Err()
				})
				d := New(newRegistry(t, toolSpec{name: "t", timeout: 100 * time.Millisecond, handler: h}), Config{})
				for range 5 {
					if _, err := d.Call(context.Background(), Call{Tool: "t"}); !errors.Is(err, ErrTimeout) {
						t.Fatalf("got %v, want timeout", err)
					}
				}
				if open := d.breakers.For("t").State() == breaker.Open; open != tc.open {
					t.Fatalf("breaker open: %v, want %v", open, tc.open)
				}
			})
		})
	}
}

// Validation runs under the call's deadline with the tool's timeout as its
// budget: arguments that take longer to check fail with timeout before
// any attempt, instead of costing CPU for as long as they take.
func TestValidationOutlastingTheToolIsATimeout(t *testing.T) {
	var defs []string // every item is tried against 2^7 failing branches
	for i := range 6 {
		defs = append(defs, fmt.Sprintf(`"a%d":{"anyOf":[{"$ref":"#/$defs/a%d"},{"$ref":"#/$defs/a%d"}]}`, i, i+1, i+1))
	}
	defs = append(defs, `"a6":{"type":"string"}`)
	schema := `{"type":"object","properties":{"l":{"type":"array","items":{"$ref":"#/$defs/a0"}}},"$defs":{` + strings.Join(defs, ",") + `}}`
	f := &fakeTool{script: []step{{}}}
	d := New(newRegistry(t, toolSpec{name: "u", timeout: time.Millisecond, handler: f, schema: schema}), Config{})
	args := `{"l":[` + strings.Repeat(`1,`, 999) + `1]}`
	_, err := d.Call(context.Background(), Call{Tool: "u", Args: json.RawMessage(args)})
	de := asDispatchError(t, err)
	if de.Kind != KindTimeout || de.Attempts != 0 || f.calls.Load() != 0 || !strings.Contains(de.Message, "input schema within 1ms") {
		t.Fatalf("got %+v after %d runs; want a timeout before any attempt", de, f.calls.Load())
	}
}
