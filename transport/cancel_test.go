package transport_test

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolhost/toolhost/dispatcher"
	"github.com/toolhost/toolhost/events"
	"github.com/toolhost/toolhost/idempotency"
	"github.com/toolhost/toolhost/plan"
	"github.com/toolhost/toolhost/registry"
	"github.com/toolhost/toolhost/transport"
)

// logLines hands each log line (one JSON record) to a channel.
type logLines chan map[string]any

func (l logLines) Write(p []byte) (int, error) {
	var rec map[string]any
	if err := json.Unmarshal(p, &rec); err == nil {
		l <- rec
	}
	return len(p), nil
}

// next returns the next record with msg, skipping others.
func (l logLines) next(t *testing.T, msg string) map[string]any {
	t.Helper()
	for rec := range l {
		if rec["msg"] == msg {
			return rec
		}
	}
	t.Fatal("log closed")
	return nil
}

// recorder is the server's side of a transport, remembering every
// response the server wrote.
type recorder struct {
	mcp.Transport
	mu        sync.Mutex
	responses []jsonrpc.ID
}

func (r *recorder) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := r.Transport.Connect(ctx)
	return &recordingConn{Connection: c, r: r}, err
}

func (r *recorder) responded(id jsonrpc.ID) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, x := range r.responses {
		if x == id {
			return true
		}
	}
	return false
}

type recordingConn struct {
	mcp.Connection
	r *recorder
}

func (c *recordingConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if resp, ok := msg.(*jsonrpc.Response); ok {
		c.r.mu.Lock()
		c.r.responses = append(c.r.responses, resp.ID)
		c.r.mu.Unlock()
	}
	return c.Connection.Write(ctx, msg)
}

// gate is a tool that signals each call's start and blocks until its
// context ends (reporting why) or the test releases it.
type gate struct {
	entered chan struct{}
	exited  chan error
	release chan struct{}

	mu             sync.Mutex
	inflight, peak int
}

func newGate() *gate {
	return &gate{entered: make(chan struct{}, 64), exited: make(chan error, 64), release: make(chan struct{})}
}

func (g *gate) Handle(ctx context.Context, _ json.RawMessage) (json.RawMessage, error) {
	g.mu.Lock()
	g.inflight++
	g.peak = max(g.peak, g.inflight)
	g.mu.Unlock()
	defer func() {
		g.mu.Lock()
		g.inflight--
		g.mu.Unlock()
	}()
	g.entered <- struct{}{}
	select {
	case <-ctx.Done():
		g.exited <- ctx.Err()
		return nil, ctx.Err()
	case <-g.release:
		g.exited <- nil
		return json.RawMessage(`{"released":true}`), nil
	}
}

// signalStore is the in-memory idempotency store, telling the test of
// every claim made, so that it knows when a call has joined a key.
type signalStore struct {
	*idempotency.Memory
	acquired chan struct{}
}

func (s signalStore) Acquire(ctx context.Context, key, fp string) (idempotency.Claim, error) {
	c, err := s.Memory.Acquire(ctx, key, fp)
	s.acquired <- struct{}{}
	return c, err
}

// cancelRig serves the gate tool (as "gate", and "gate.idem", an
// idempotent twin) with toolhost.plan over an in-memory connection to the
// SDK client.
type cancelRig struct {
	g    *gate
	srv  *transport.Server
	cs   *mcp.ClientSession
	rec  *recorder
	logs logLines
	bus  *events.Bus
	keys signalStore
}

func newCancelRig(t *testing.T, opts transport.Options) *cancelRig {
	t.Helper()
	r := &cancelRig{g: newGate(), logs: make(logLines, 1024), bus: events.NewBus(nil),
		keys: signalStore{Memory: idempotency.NewMemory(0), acquired: make(chan struct{}, 64)}}
	obj := json.RawMessage(`{"type":"object"}`)
	reg, err := registry.New([]*registry.Tool{
		{Name: "gate", InputSchema: obj, Timeout: time.Hour, Handler: r.g},
		{Name: "gate.idem", InputSchema: obj, Timeout: time.Hour, Idempotent: true, Handler: r.g},
	})
	if err != nil {
		t.Fatal(err)
	}
	opts.Logger = slog.New(slog.NewJSONHandler(r.logs, nil))
	opts.Plans = &transport.PlanOptions{Events: r.bus}
	r.srv = transport.New(dispatcher.New(reg, dispatcher.Config{Idempotency: r.keys}), reg, opts)
	ct, st := mcp.NewInMemoryTransports()
	r.rec = &recorder{Transport: st}
	ss, err := r.srv.Connect(context.Background(), r.rec)
	if err != nil {
		t.Fatal(err)
	}
	r.cs, err = mcp.NewClient(&mcp.Implementation{Name: "cancel-test", Version: "v0"}, nil).Connect(context.Background(), ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		r.cs.Close()
		ss.Wait()
	})
	return r
}

// callAsync calls name from a goroutine; the error arrives on the channel.
func (r *cancelRig) callAsync(ctx context.Context, name string, args any, meta mcp.Meta) <-chan error {
	done := make(chan error, 1)
	go func() {
		_, err := r.cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args, Meta: meta})
		done <- err
	}()
	return done
}

// settled waits until the server has finished every call (its response
// written or dropped).
func (r *cancelRig) settled(t *testing.T) {
	t.Helper()
	if err := r.srv.Drain(context.Background()); err != nil {
		t.Fatal(err)
	}
}

func wantCancelled(t *testing.T, rec map[string]any, attempts float64) {
	t.Helper()
	if rec["outcome"] != "cancelled" || rec["attempts"] != attempts {
		t.Errorf("audit record %v; want outcome cancelled, attempts %v", rec, attempts)
	}
}

// Issue 9.7: notifications/cancelled (sent by the SDK client when the
// call's context is cancelled) stops the tool, the audit record says
// cancelled with the attempt made, and no response is sent.
func TestCancelPlainCallThroughSDK(t *testing.T) {
	r := newCancelRig(t, transport.Options{})
	ctx, cancel := context.WithCancel(context.Background())
	done := r.callAsync(ctx, "gate", map[string]any{}, nil)
	<-r.g.entered
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("CallTool = %v, want the context's cancellation", err)
	}
	if err := <-r.g.exited; !errors.Is(err, context.Canceled) {
		t.Fatalf("the tool ended with %v, want its context cancelled", err)
	}
	wantCancelled(t, r.logs.next(t, "call"), 1)
	if _, err := r.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "no.such", Arguments: map[string]any{}}); err != nil {
		t.Fatalf("the session does not serve after a cancel: %v", err)
	}
	r.settled(t)
	if id, _ := jsonrpc.MakeID(float64(2)); r.rec.responded(id) { // 1 is initialize
		t.Error("the server sent a response for the cancelled request")
	}
	if id, _ := jsonrpc.MakeID(float64(3)); !r.rec.responded(id) {
		t.Error("the call after the cancelled one got no response")
	}
}

// A keyed call: the execution goes on while one waiter stays, and stops
// when the last one cancels; each waiter's record says cancelled, the
// last with the attempt the execution made.
func TestCancelKeyedCallThroughSDK(t *testing.T) {
	r := newCancelRig(t, transport.Options{})
	meta := mcp.Meta{transport.MetaIdempotencyKey: "k1"}
	ctx1, cancel1 := context.WithCancel(context.Background())
	ctx2, cancel2 := context.WithCancel(context.Background())
	first := r.callAsync(ctx1, "gate.idem", map[string]any{}, meta)
	<-r.g.entered
	second := r.callAsync(ctx2, "gate.idem", map[string]any{}, meta)
	<-r.keys.acquired // the first call's claim
	<-r.keys.acquired // the second call has joined

	cancel1()
	<-first
	wantCancelled(t, r.logs.next(t, "call"), 0)
	select {
	case err := <-r.g.exited:
		t.Fatalf("the execution ended (%v) although a waiter stays", err)
	default:
	}

	cancel2()
	<-second
	if err := <-r.g.exited; !errors.Is(err, context.Canceled) {
		t.Fatalf("the execution ended with %v, want it cancelled", err)
	}
	wantCancelled(t, r.logs.next(t, "call"), 1)

	// The stopped execution is not replayed: the key runs anew.
	done := r.callAsync(context.Background(), "gate.idem", map[string]any{}, meta)
	<-r.g.entered
	r.g.release <- struct{}{}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if rec := r.logs.next(t, "call"); rec["outcome"] != "ok" {
		t.Errorf("the next call with the key: %v", rec)
	}
}

// A cancelled toolhost.plan stops its running step and ends the session
// with status cancelled in the event log.
func TestCancelPlanThroughSDK(t *testing.T) {
	r := newCancelRig(t, transport.Options{})
	sub := r.bus.Subscribe(1024)
	defer sub.Close()
	ctx, cancel := context.WithCancel(context.Background())
	done := r.callAsync(ctx, transport.PlanToolName, json.RawMessage(
		`{"goal":"wait","steps":[{"id":1,"tool_name":"gate.idem","args":{}},{"id":2,"tool_name":"gate","args":{}}]}`), nil)
	<-r.g.entered
	cancel()
	<-done
	if err := <-r.g.exited; !errors.Is(err, context.Canceled) {
		t.Fatalf("the step ended with %v, want it cancelled", err)
	}
	wantCancelled(t, r.logs.next(t, "call"), 1)
	if rec := r.logs.next(t, "plan"); rec["status"] != "cancelled" {
		t.Errorf("plan record %v, want status cancelled", rec)
	}
	for e := range sub.C {
		if e.Type == string(plan.EventSessionEnd) {
			if pe := e.Data.(plan.Event); pe.Status != plan.StatusCancelled || pe.Reason != plan.ReasonCancelled {
				t.Errorf("session.end %+v, want status and reason cancelled", pe)
			}
			break
		}
	}
	r.settled(t)
	if id, _ := jsonrpc.MakeID(float64(2)); r.rec.responded(id) {
		t.Error("the server sent a response for the cancelled plan")
	}
}

// Finding 10.9: a plan's steps count against the caller's cap. The plan
// lends its own place to one step, so it never deadlocks, and further
// steps wait for places rather than exceed the cap.
func TestPlanStepsHoldCallerPlaces(t *testing.T) {
	for _, limit := range []int{1, 2, 3} {
		synctest.Test(t, func(t *testing.T) {
			r := newCancelRig(t, transport.Options{MaxCallsPerCaller: limit})
			var steps []string
			for i := 1; i <= 6; i++ {
				steps = append(steps, `{"id":`+string(rune('0'+i))+`,"tool_name":"gate","args":{"n":`+string(rune('0'+i))+`}}`)
			}
			res := make(chan *mcp.CallToolResult, 1)
			go func() {
				out, err := r.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: transport.PlanToolName,
					Arguments: json.RawMessage(`{"goal":"fan out","max_parallel":8,"steps":[` + strings.Join(steps, ",") + `]}`)})
				if err != nil {
					t.Error(err)
				}
				res <- out
			}()
			for released := range 6 {
				synctest.Wait()
				r.g.mu.Lock()
				n := r.g.inflight
				r.g.mu.Unlock()
				if n != min(limit, 6-released) {
					t.Fatalf("cap %d: %d steps in flight", limit, n)
				}
				<-r.g.entered
				r.g.release <- struct{}{}
			}
			out := <-res
			if out == nil || out.IsError {
				t.Fatalf("cap %d: plan result %+v", limit, out)
			}
			if r.g.peak != limit {
				t.Errorf("cap %d: at most %d steps ran at once", limit, r.g.peak)
			}
		})
	}
}
