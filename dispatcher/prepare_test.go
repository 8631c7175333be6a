package dispatcher

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/toolhost/toolhost/breaker"
	"github.com/toolhost/toolhost/registry"
)

// preparingTool is a registry.Preparer whose Prepare waits for gate (a compile
// or an admission slot the host is waiting for) and whose call then takes
// work of the tool's own time; it records the deadline each call ran under.
type preparingTool struct {
	gate      chan struct{}
	work      time.Duration
	prepared  int
	done      int
	deadlines []time.Time
}

type preparedKey struct{}

func (g *preparingTool) Prepare(ctx context.Context, _ registry.Request) (context.Context, func(), error) {
	select {
	case <-g.gate:
	case <-ctx.Done():
		return nil, nil, ctx.Err()
	}
	g.prepared++
	return context.WithValue(ctx, preparedKey{}, true), func() { g.done++ }, nil
}

func (g *preparingTool) Handle(ctx context.Context, _ json.RawMessage) (json.RawMessage, error) {
	if ctx.Value(preparedKey{}) == nil {
		return nil, errors.New("called without the prepared context")
	}
	d, _ := ctx.Deadline()
	g.deadlines = append(g.deadlines, d)
	select {
	case <-time.After(g.work):
		return json.RawMessage(`{"ok":true}`), nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// A call whose host must first wait longer than the tool's timeout (a
// first call after a lazy start waiting for its module's compile, or for
// an admission slot) still succeeds: the wait is under the caller's
// deadline, and the attempt's timeout starts when the guest can run.
func TestPrepareWaitIsOutsideTheAttemptTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := &preparingTool{gate: make(chan struct{}), work: 150 * time.Millisecond}
		d := New(newRegistry(t, toolSpec{name: "t", timeout: 200 * time.Millisecond, handler: g}), Config{})
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		start := time.Now()
		go func() {
			time.Sleep(2 * time.Second) // the compile takes 10× the tool's timeout
			close(g.gate)
		}()
		res, err := d.Call(ctx, Call{Tool: "t"})
		if err != nil || string(res) != `{"ok":true}` {
			t.Fatalf("got %s, %v; want the result", res, err)
		}
		if want := start.Add(2*time.Second + 200*time.Millisecond); len(g.deadlines) != 1 || !g.deadlines[0].Equal(want) {
			t.Fatalf("attempt deadlines %v; want one, the tool's timeout after the wait (%v)", g.deadlines, want)
		}
		if g.prepared != 1 || g.done != 1 {
			t.Fatalf("prepared %d, done %d; want 1 and 1", g.prepared, g.done)
		}
	})
}

// A caller whose deadline passes while the host waits gets the timeout
// envelope, with no attempt made, and the tool's breaker stays closed
// however many such calls there are.
func TestPrepareWaitPastCallerDeadlineSparesTheBreaker(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := &preparingTool{gate: make(chan struct{})}
		d := New(newRegistry(t, toolSpec{name: "t", timeout: time.Second, idempotent: true, handler: g}), Config{})
		for range 2 * breaker.DefaultFailures {
			ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
			_, err := d.Call(ctx, Call{Tool: "t"})
			cancel()
			var de *DispatchError
			if !errors.As(err, &de) || de.Kind != KindTimeout || de.Attempts != 0 {
				t.Fatalf("got %v; want a timeout with no attempt made", err)
			}
		}
		if s := d.breakers.For("t").State(); s != breaker.Closed {
			t.Fatalf("breaker %v; want closed", s)
		}
		if g.done != 0 {
			t.Fatalf("done called %d times for waits that never ended", g.done)
		}
	})
}

// A Prepare that fails for another reason (a compile that fails) is the
// attempt's error, as it would have been inside the call.
func TestPrepareFailureIsTheAttemptsError(t *testing.T) {
	h := &failingPrepare{err: errors.New("compiling: invalid wasm")}
	d := New(newRegistry(t, toolSpec{name: "t", handler: h}), Config{})
	_, err := d.Call(context.Background(), Call{Tool: "t"})
	var de *DispatchError
	if !errors.As(err, &de) || de.Kind != KindInternal || de.Attempts != 1 || h.calls != 0 {
		t.Fatalf("got %v (handler called %d times); want internal after 1 attempt, the handler never called", err, h.calls)
	}
}

type failingPrepare struct {
	err   error
	calls int
}

func (f *failingPrepare) Prepare(context.Context, registry.Request) (context.Context, func(), error) {
	return nil, nil, f.err
}

func (f *failingPrepare) Handle(context.Context, json.RawMessage) (json.RawMessage, error) {
	f.calls++
	return json.RawMessage(`{}`), nil
}

// Keyed calls prepare once, in the execution they share, under the
// leader's deadline, not the tool's timeout.
func TestPrepareKeyedCallsShareOneWait(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := &preparingTool{gate: make(chan struct{}), work: 10 * time.Millisecond}
		d := New(newRegistry(t, toolSpec{name: "t", timeout: 100 * time.Millisecond, handler: g}), Config{})
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		errs := make(chan error, 3)
		for range 3 {
			go func() {
				_, err := d.Call(ctx, Call{Tool: "t", Options: Options{IdempotencyKey: "k"}})
				errs <- err
			}()
		}
		time.Sleep(time.Second) // ten times the tool's timeout, in the wait
		close(g.gate)
		for range 3 {
			if err := <-errs; err != nil {
				t.Fatalf("keyed call: %v", err)
			}
		}
		if g.prepared != 1 || g.done != 1 {
			t.Fatalf("prepared %d, done %d; want one shared execution", g.prepared, g.done)
		}
	})
}
