package dispatcher

import (
	"context"
	"encoding/json"
	"sync"
	"testing"

	"github.com/toolhost/toolhost/registry"
)

// callerTool records the caller of every call it gets through
// HandleRequest, failing the first one with a transient error.
type callerTool struct {
	mu      sync.Mutex
	callers []string
	plain   int
}

func (c *callerTool) Handle(context.Context, json.RawMessage) (json.RawMessage, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.plain++
	return json.RawMessage(`{}`), nil
}

func (c *callerTool) HandleRequest(_ context.Context, req registry.Request) (json.RawMessage, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.callers = append(c.callers, req.Caller)
	if len(c.callers) == 1 {
		return nil, transient(0)
	}
	return req.Args, nil
}

// TestHandlerGetsTheCaller: the caller's identity reaches a RequestHandler
// on every attempt, retries and keyed executions included, and Handle is
// never used for it.
func TestHandlerGetsTheCaller(t *testing.T) {
	tool := &callerTool{}
	d := New(newRegistry(t, toolSpec{name: "t", idempotent: true, handler: tool}), Config{Rand: fixedRand(0)})
	res, err := d.Call(context.Background(), Call{Tool: "t", Args: json.RawMessage(`{"a":1}`), Options: Options{Caller: "alice"}})
	if err != nil || string(res) != `{"a":1}` {
		t.Fatalf("call = %s, %v", res, err)
	}
	if _, err := d.Call(context.Background(), Call{Tool: "t", Args: json.RawMessage(`{}`), Options: Options{Caller: "bob", IdempotencyKey: "k"}}); err != nil {
		t.Fatal(err)
	}
	want := []string{"alice", "alice", "bob"}
	if len(tool.callers) != len(want) || tool.plain != 0 {
		t.Fatalf("callers = %q, Handle calls %d; want %q through HandleRequest only", tool.callers, tool.plain, want)
	}
	for i := range want {
		if tool.callers[i] != want[i] {
			t.Fatalf("callers = %q, want %q", tool.callers, want)
		}
	}
}
