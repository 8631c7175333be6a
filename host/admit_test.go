package host_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/toolhost/toolhost/breaker"
	"github.com/toolhost/toolhost/dispatcher"
	"github.com/toolhost/toolhost/host"
	"github.com/toolhost/toolhost/internal/attempt"
	"github.com/toolhost/toolhost/loader"
	"github.com/toolhost/toolhost/registry"
)

// With MaxFresh slots, never more fresh instances are made and run at
// once, however many calls arrive together; every call still completes.
func TestAdmissionBoundsFreshInstances(t *testing.T) {
	rt := newRuntime(t, host.Config{MaxFresh: 2})
	m, err := rt.LoadFile(context.Background(), watPath(t, "echo"))
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 32)
	for range 32 {
		wg.Go(func() {
			if _, err := m.Call(context.Background(), "echo", []byte(`{}`), host.Limits{}); err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if s := rt.AdmissionStats(); s.Peak > 2 || s.Peak < 1 || s.InUse != 0 || s.Limit != 2 {
		t.Fatalf("admission %+v; want at most 2 at once, none left in use", s)
	}
}

// A call queued for a slot whose deadline passes there ends with its
// deadline, having run no guest code: the dispatcher reads that as the
// host starved (not the tool's failure, not counted against its breaker).
// Once the slot is free the next call runs.
func TestAdmissionQueuedCallIsHostStarved(t *testing.T) {
	rt := newRuntime(t, host.Config{MaxFresh: 1})
	m, err := rt.LoadFile(context.Background(), watPath(t, "echo"))
	if err != nil {
		t.Fatal(err)
	}
	leave, err := rt.TakeSlot(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	ctx, stats := attempt.With(ctx)
	if _, err := m.Call(ctx, "echo", []byte(`{}`), host.Limits{}); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("queued call: %v; want its deadline", err)
	}
	if guest, ran := stats.Guest(); !ran || guest != 0 {
		t.Fatalf("queued call: guest time %v (ran %v); want 0 in a module", guest, ran)
	}
	if s := rt.AdmissionStats(); s.Waited != 1 || s.Starved != 1 || s.Queued != 0 {
		t.Fatalf("admission %+v; want one call that waited and starved", s)
	}
	leave()
	if res, err := m.Call(context.Background(), "echo", []byte(`{}`), host.Limits{}); err != nil || string(res) != `{}` {
		t.Fatalf("after the slot was freed: %s, %v", res, err)
	}
}

// Through the dispatcher: calls whose deadline passes while they queue
// for a slot (before their attempt starts: see Module.Prepare) time out,
// made no attempt, and however many there are the tool's breaker stays
// closed; the next call, once a slot is free, runs.
func TestAdmissionStarvedTimeoutsSpareTheBreaker(t *testing.T) {
	rt := newRuntime(t, host.Config{MaxFresh: 1})
	d := echoDispatcher(t, rt, 20*time.Millisecond)
	leave, err := rt.TakeSlot(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for range 2 * breaker.DefaultFailures {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
		_, err := d.Call(ctx, dispatcher.Call{Tool: "wat.echo", Args: []byte(`{}`)})
		cancel()
		var de *dispatcher.DispatchError
		if !errors.As(err, &de) || de.Kind != dispatcher.KindTimeout || de.Attempts != 0 {
			t.Fatalf("queued call: %v; want a timeout with no attempt made", err)
		}
	}
	leave()
	if res, err := d.Call(context.Background(), dispatcher.Call{Tool: "wat.echo", Args: []byte(`{"k":1}`)}); err != nil || string(res) != `{"k":1}` {
		t.Fatalf("after the starved timeouts: %s, %v; want the call run (breaker closed)", res, err)
	}
}

// A call that must queue for its slot longer than the tool's timeout
// (200 ms) succeeds once the slot frees: it queues under the caller's
// deadline, and its attempt's timeout starts when it can run. On the old
// path the attempt's timeout ran in the queue and the call failed.
func TestAdmissionWaitIsNotTheToolsTimeout(t *testing.T) {
	const timeout = 200 * time.Millisecond
	rt := newRuntime(t, host.Config{MaxFresh: 1})
	d := echoDispatcher(t, rt, timeout)
	leave, err := rt.TakeSlot(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	done := make(chan error, 1)
	go func() {
		one := 1 // no retry to hide a first attempt that timed out
		res, err := d.Call(ctx, dispatcher.Call{Tool: "wat.echo", Args: []byte(`{"k":2}`), Options: dispatcher.Options{Budget: &one}})
		if err == nil && string(res) != `{"k":2}` {
			err = fmt.Errorf("result %s", res)
		}
		done <- err
	}()
	// Hold the slot for twice the tool's timeout: the call cannot end
	// meanwhile (it has no slot), unless its timeout runs in the queue.
	select {
	case err := <-done:
		t.Fatalf("the call ended while it had no slot: %v", err)
	case <-time.After(2 * timeout):
	}
	leave()
	if err := <-done; err != nil {
		t.Fatalf("call after the wait: %v; want its result", err)
	}
}

// echoDispatcher serves the echo module's wat.echo with timeout.
func echoDispatcher(t *testing.T, rt *host.Runtime, timeout time.Duration) *dispatcher.Dispatcher {
	t.Helper()
	m, err := rt.LoadFile(context.Background(), watPath(t, "echo"))
	if err != nil {
		t.Fatal(err)
	}
	return timedDispatcher(t, m, "wat.echo", timeout)
}

// timedDispatcher serves m's tool name with timeout, as serve does.
func timedDispatcher(t *testing.T, m *host.Module, name string, timeout time.Duration) *dispatcher.Dispatcher {
	t.Helper()
	var rec *registry.Tool
	for _, tool := range m.Tools {
		if tool.Name == name {
			rec = loader.Record(m, tool, loader.Override{Timeout: timeout})
		}
	}
	if rec == nil {
		t.Fatalf("no %s in %v", name, m.Tools)
	}
	reg, err := registry.New([]*registry.Tool{rec})
	if err != nil {
		t.Fatal(err)
	}
	return dispatcher.New(reg, dispatcher.Config{})
}
