package host_test

import (
	"context"
	"errors"
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

// Through the dispatcher: timeouts of calls that only queued for a slot
// are the host's, not the tool's; however many there are, the tool's
// breaker stays closed and the next call, once a slot is free, runs.
func TestAdmissionStarvedTimeoutsSpareTheBreaker(t *testing.T) {
	rt := newRuntime(t, host.Config{MaxFresh: 1})
	m, err := rt.LoadFile(context.Background(), watPath(t, "echo"))
	if err != nil {
		t.Fatal(err)
	}
	var rec *registry.Tool
	for _, tool := range m.Tools {
		if tool.Name == "wat.echo" {
			rec = loader.Record(m, tool, loader.Override{Timeout: 20 * time.Millisecond})
		}
	}
	if rec == nil {
		t.Fatalf("no wat.echo in %v", m.Tools)
	}
	reg, err := registry.New([]*registry.Tool{rec})
	if err != nil {
		t.Fatal(err)
	}
	d := dispatcher.New(reg, dispatcher.Config{})
	leave, err := rt.TakeSlot(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for range 2 * breaker.DefaultFailures {
		if _, err := d.Call(context.Background(), dispatcher.Call{Tool: "wat.echo", Args: []byte(`{}`)}); !errors.Is(err, dispatcher.ErrTimeout) {
			t.Fatalf("queued call: %v; want a timeout", err)
		}
	}
	leave()
	if res, err := d.Call(context.Background(), dispatcher.Call{Tool: "wat.echo", Args: []byte(`{"k":1}`)}); err != nil || string(res) != `{"k":1}` {
		t.Fatalf("after the starved timeouts: %s, %v; want the call run (breaker closed)", res, err)
	}
}
