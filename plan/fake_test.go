package plan

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolhost/toolhost/abi"
	"github.com/toolhost/toolhost/dispatcher"
	"github.com/toolhost/toolhost/events"
	"github.com/toolhost/toolhost/registry"
)

// fakeDispatcher answers calls without running anything. Each tool answers
// from its arguments (see answer); fail scripts failures by step id (read
// back from the idempotency key) or by tool name. With gated set, every
// call waits until the test releases its step id, so a test decides the
// order in which calls complete.
type fakeDispatcher struct {
	failStep map[int]dispatcher.Kind
	failTool map[string]dispatcher.Kind
	gated    bool

	mu       sync.Mutex
	calls    []dispatcher.Call
	inflight int
	peak     int
	gates    map[int]chan struct{}
}

func (f *fakeDispatcher) Call(ctx context.Context, c dispatcher.Call) (json.RawMessage, error) {
	id := keyStep(c.IdempotencyKey)
	f.mu.Lock()
	f.calls = append(f.calls, c)
	f.inflight++
	f.peak = max(f.peak, f.inflight)
	gate := f.gate(id)
	f.mu.Unlock()
	defer func() {
		f.mu.Lock()
		f.inflight--
		f.mu.Unlock()
	}()
	if f.gated {
		select {
		case <-gate:
		case <-ctx.Done():
			return nil, &dispatcher.DispatchError{Kind: dispatcher.KindInternal, Message: "cancelled", Attempts: 1}
		}
	}
	if k, ok := f.failStep[id]; ok {
		return nil, fakeError(k, c.Tool)
	}
	if k, ok := f.failTool[c.Tool]; ok {
		return nil, fakeError(k, c.Tool)
	}
	return answer(c.Tool, c.Args), nil
}

// gate returns step id's release channel; f.mu must be held.
func (f *fakeDispatcher) gate(id int) chan struct{} {
	if f.gates == nil {
		f.gates = map[int]chan struct{}{}
	}
	g, ok := f.gates[id]
	if !ok {
		g = make(chan struct{})
		f.gates[id] = g
	}
	return g
}

// release lets step id's call complete.
func (f *fakeDispatcher) release(id int) {
	f.mu.Lock()
	g := f.gate(id)
	f.mu.Unlock()
	close(g)
}

func (f *fakeDispatcher) callCount() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.calls)
}

func fakeError(k dispatcher.Kind, tool string) error {
	attempts := 1
	if k == dispatcher.KindTransient || k == dispatcher.KindTimeout {
		attempts = 3
	}
	if k == dispatcher.KindBudgetExceeded {
		attempts = 0
	}
	return &dispatcher.DispatchError{Kind: k, Message: fmt.Sprintf("%s failed with %s", tool, k), Attempts: attempts,
		JSONRPCCode: k.Code()}
}

// answer is what the fake tools return: text.count counts, math.eval
// echoes its variables, everything else names itself and its arguments.
func answer(tool string, args json.RawMessage) json.RawMessage {
	var a map[string]any
	_ = json.Unmarshal(args, &a)
	var v any
	switch tool {
	case "text.count":
		text, _ := a["text"].(string)
		v = map[string]any{"words": len(strings.Fields(text)), "lines": strings.Count(text, "\n") + 1}
	case "text.slug":
		text, _ := a["text"].(string)
		v = map[string]any{"slug": strings.ToLower(strings.Join(strings.Fields(text), "-"))}
	default:
		v = map[string]any{"tool": tool, "args": a}
	}
	b, _ := json.Marshal(v)
	return b
}

// keyStep reads the step id back from an idempotency key.
func keyStep(key string) int {
	parts := strings.SplitN(key, ":", 3)
	if len(parts) < 2 {
		return 0
	}
	n, _ := strconv.Atoi(parts[1])
	return n
}

// script is a planner that returns plans[i] on its i-th call (nothing
// after the last) and records what it was given.
type script struct {
	plans [][]Step
	mu    sync.Mutex
	seen  []Input
}

func (s *script) Plan(_ context.Context, in Input) ([]Step, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.seen = append(s.seen, in)
	if len(s.seen) > len(s.plans) {
		return nil, nil
	}
	return s.plans[len(s.seen)-1], nil
}

// st builds a step; args is JSON text.
func st(id int, tool, args string) Step {
	return Step{ID: id, ToolName: tool, Args: json.RawMessage(args), ExpectedOutcome: tool + " does its job"}
}

// reusable tools in the tests: every tool except those starting with
// "write.".
func reusable(tool string) bool { return !strings.HasPrefix(tool, "write.") }

// runSession runs one session with a fixed id and no clock.
func runSession(t *testing.T, d Dispatcher, p Planner, goal string, lim Limits, extra func(*Config)) SessionResult {
	t.Helper()
	cfg := Config{Dispatcher: d, Planner: p, Reusable: reusable, Now: func() time.Time { return time.Time{} }}
	if extra != nil {
		extra(&cfg)
	}
	res, err := New(cfg).Run(context.Background(), Session{ID: "s1", Goal: goal, Limits: lim})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// flakyDispatcher is a real dispatcher over one tool, "flaky", which fails
// transiently the first `failures` times it sees given arguments. Retries
// are published on the returned bus; jitter is off.
func flakyDispatcher(t *testing.T, failures int) (*dispatcher.Dispatcher, *events.Bus) {
	t.Helper()
	var mu sync.Mutex
	seen := map[string]int{}
	h := registry.HandlerFunc(func(_ context.Context, args json.RawMessage) (json.RawMessage, error) {
		mu.Lock()
		seen[string(args)]++
		n := seen[string(args)]
		mu.Unlock()
		if n <= failures {
			return nil, &abi.Error{Kind: abi.KindTransient, Message: "upstream said 429"}
		}
		return json.RawMessage(`{"ok":true}`), nil
	})
	reg, err := registry.New([]*registry.Tool{{Name: "flaky", InputSchema: []byte(`{"type":"object"}`),
		Timeout: time.Second, Idempotent: true, Handler: h}})
	if err != nil {
		t.Fatal(err)
	}
	bus := events.NewBus(nil)
	return dispatcher.New(reg, dispatcher.Config{Events: bus, Rand: func() float64 { return 0 }}), bus
}
