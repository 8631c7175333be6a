package dispatcher

import (
	"context"
	"encoding/json"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolhost/toolhost/abi"
	"github.com/toolhost/toolhost/events"
	"github.com/toolhost/toolhost/registry"
)

// fakeTool is a scripted handler: step i of the script decides what call i
// does; the last step repeats.
type fakeTool struct {
	calls    atomic.Int32
	inFlight atomic.Int32
	maxSeen  atomic.Int32
	script   []step
}

type step struct {
	result string        // returned on success
	err    error         // returned instead
	block  bool          // wait for ctx to end, then return its error
	hold   time.Duration // take this long (honouring ctx)
}

func (f *fakeTool) Handle(ctx context.Context, _ json.RawMessage) (json.RawMessage, error) {
	n := int(f.calls.Add(1))
	cur := f.inFlight.Add(1)
	defer f.inFlight.Add(-1)
	for {
		m := f.maxSeen.Load()
		if cur <= m || f.maxSeen.CompareAndSwap(m, cur) {
			break
		}
	}
	s := f.script[min(n, len(f.script))-1]
	if s.block {
		<-ctx.Done()
		return nil, ctx.Err()
	}
	if s.hold > 0 {
		t := time.NewTimer(s.hold)
		defer t.Stop()
		select {
		case <-t.C:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	if s.err != nil {
		return nil, s.err
	}
	if s.result == "" {
		return json.RawMessage(`{"ok":true}`), nil
	}
	return json.RawMessage(s.result), nil
}

func transient(retryAfterMS int64) error {
	return &abi.Error{Kind: abi.KindTransient, Message: "upstream busy", RetryAfterMS: retryAfterMS}
}

var internalErr = &abi.Error{Kind: abi.KindInternal, Message: "boom"}

type toolSpec struct {
	name       string
	timeout    time.Duration
	idempotent bool
	handler    registry.Handler
	schema     string
}

func newRegistry(t testing.TB, specs ...toolSpec) *registry.Registry {
	t.Helper()
	var tools []*registry.Tool
	for _, s := range specs {
		if s.timeout == 0 {
			s.timeout = time.Second
		}
		if s.schema == "" {
			s.schema = `{"type":"object"}`
		}
		tools = append(tools, &registry.Tool{Name: s.name, Timeout: s.timeout, Idempotent: s.idempotent,
			InputSchema: json.RawMessage(s.schema), Handler: s.handler})
	}
	reg, err := registry.New(tools)
	if err != nil {
		t.Fatal(err)
	}
	return reg
}

// fixedRand makes jitter exact: every draw is u.
func fixedRand(u float64) func() float64 { return func() float64 { return u } }

// recorder collects events of one subscription.
func subscribe(t testing.TB, bus *events.Bus) func() []events.Event {
	sub := bus.Subscribe(1024)
	t.Cleanup(sub.Close)
	return func() []events.Event {
		var out []events.Event
		for {
			select {
			case e := <-sub.C:
				out = append(out, e)
			default:
				return out
			}
		}
	}
}

func asDispatchError(t testing.TB, err error) *DispatchError {
	t.Helper()
	de, ok := err.(*DispatchError)
	if !ok {
		t.Fatalf("error %v (%T) is not a *DispatchError", err, err)
	}
	return de
}

func intp(n int) *int { return &n }
