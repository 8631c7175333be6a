package dispatcher

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
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
// a slot for as long as it liked.
func TestCallerCannotLengthenTimeout(t *testing.T) {
	for _, tc := range []struct {
		name       string
		maxTimeout time.Duration
		caller     time.Duration
		took       time.Duration // until the attempt ended
		err        error
	}{
		{"longer is capped", 0, time.Hour, 100 * time.Millisecond, ErrTimeout},
		{"shorter applies", 0, 10 * time.Millisecond, 10 * time.Millisecond, ErrTimeout},
		{"operator allows more", time.Second, time.Hour, time.Second, ErrTimeout},
		{"within the allowance", time.Hour, 2 * time.Second, 2 * time.Second, nil},
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
