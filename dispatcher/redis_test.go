package dispatcher

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolhost/toolhost/idempotency"
	"github.com/toolhost/toolhost/idempotency/redisstore"
	"github.com/toolhost/toolhost/internal/redisconn"
	"github.com/toolhost/toolhost/internal/testkit/redistest"
)

// gatedTool returns a nonce per execution (its run count), and holds each
// execution until release is closed; started receives once per execution.
type gatedTool struct {
	runs    atomic.Int32
	started chan struct{}
	release chan struct{}
}

func newGated() *gatedTool {
	return &gatedTool{started: make(chan struct{}, 16), release: make(chan struct{})}
}

func (g *gatedTool) Handle(ctx context.Context, _ json.RawMessage) (json.RawMessage, error) {
	n := g.runs.Add(1)
	g.started <- struct{}{}
	select {
	case <-g.release:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return json.RawMessage(fmt.Sprintf(`{"nonce":%d}`, n)), nil
}

// redisReplicas returns n dispatchers over one tool, each with its own
// Redis connection and store, as n replicas of toolhost would have.
func redisReplicas(t *testing.T, srv *redistest.Server, n int, tool *gatedTool, fallback bool) []*Dispatcher {
	t.Helper()
	var out []*Dispatcher
	for range n {
		c, err := redisconn.Open(redisconn.Options{URL: srv.URL(), Timeout: 2 * time.Second, Probe: 10 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		s := redisstore.New(redisstore.Options{Conn: c, Poll: 20 * time.Millisecond, Errors: OutcomeErrors})
		t.Cleanup(func() { s.Close(); c.Close() })
		var store idempotency.Store = s
		if fallback {
			store = &idempotency.Fallback{Primary: s, Local: idempotency.NewMemory(0)}
		}
		out = append(out, New(newRegistry(t, toolSpec{name: "t", timeout: 10 * time.Second, handler: tool}), Config{Idempotency: store}))
	}
	return out
}

func callAs(caller, key, args string) Call {
	c := keyedCall(key, args)
	c.Caller = caller
	return c
}

// One key sent to three replicas at once runs once; the others get its
// nonce. The same key with other arguments is refused on another replica,
// and another caller's same key is its own execution.
func TestRedisKeyRunsOnceAcrossReplicas(t *testing.T) {
	srv := redistest.Start(t)
	tool := newGated()
	reps := redisReplicas(t, srv, 3, tool, false)
	ctx := context.Background()
	results := make([]string, 3)
	var wg sync.WaitGroup
	wg.Go(func() {
		res, err := reps[0].Call(ctx, callAs("alice", "k", `{"a":1}`))
		if err != nil {
			t.Error(err)
		}
		results[0] = string(res)
	})
	<-tool.started // replica 0 owns the key and runs
	for i := 1; i < 3; i++ {
		wg.Go(func() {
			res, err := reps[i].Call(ctx, callAs("alice", "k", `{"a":1}`))
			if err != nil {
				t.Error(err)
			}
			results[i] = string(res)
		})
	}
	_, err := reps[2].Call(ctx, callAs("alice", "k", `{"a":2}`))
	if !errors.Is(err, ErrSchema) {
		t.Fatalf("other arguments with the key on another replica: %v, want schema", err)
	}
	close(tool.release)
	wg.Wait()
	for i, r := range results {
		if r != `{"nonce":1}` {
			t.Fatalf("replica %d answered %s, want the one execution's nonce", i, r)
		}
	}
	res, err := reps[1].Call(ctx, callAs("bob", "k", `{"a":1}`))
	if err != nil || string(res) != `{"nonce":2}` || tool.runs.Load() != 2 {
		t.Fatalf("another caller's key: %s, %v, %d runs; want its own execution", res, err, tool.runs.Load())
	}
	// A later call with the key is replayed on any replica.
	res, err = reps[2].Call(ctx, callAs("alice", "k", `{"a":1}`))
	if err != nil || string(res) != `{"nonce":1}` {
		t.Fatalf("replay on a third replica: %s, %v", res, err)
	}
}

// Redis stopped: keyed calls fail closed with transient and never run;
// unkeyed calls keep working; when Redis is back, keyed calls work again
// without a restart, and nothing ran twice.
func TestRedisDownKeyedFailClosed(t *testing.T) {
	srv := redistest.Start(t)
	tool := newGated()
	close(tool.release)
	d := redisReplicas(t, srv, 1, tool, false)[0]
	ctx := context.Background()
	if _, err := d.Call(ctx, keyedCall("before", `{}`)); err != nil {
		t.Fatal(err)
	}
	srv.Stop()
	for range 3 {
		_, err := d.Call(ctx, keyedCall("k", `{}`))
		var de *DispatchError
		if !errors.As(err, &de) || de.Kind != KindTransient || de.Attempts != 0 {
			t.Fatalf("keyed call with Redis away: %v, want transient without an attempt", err)
		}
	}
	if _, err := d.Call(ctx, Call{Tool: "t", Args: json.RawMessage(`{}`)}); err != nil {
		t.Fatalf("unkeyed call with Redis away: %v", err)
	}
	if n := tool.runs.Load(); n != 2 {
		t.Fatalf("%d runs, want 2 (one keyed before, one unkeyed)", n)
	}
	srv.Restart()
	deadline := time.Now().Add(10 * time.Second)
	for {
		_, err := d.Call(ctx, keyedCall("k", `{}`))
		if err == nil {
			break
		}
		if !errors.Is(err, ErrTransient) || time.Now().After(deadline) {
			t.Fatalf("keyed call after Redis came back: %v", err)
		}
		time.Sleep(10 * time.Millisecond) // polling until the probe finds Redis back
	}
	if _, err := d.Call(ctx, keyedCall("k", `{}`)); err != nil {
		t.Fatal(err)
	}
	if n := tool.runs.Load(); n != 3 {
		t.Fatalf("%d runs, want 3: the recovered key ran once and then replayed", n)
	}
}

// With idempotency = "local-fallback", keyed calls run while Redis is away,
// deduplicated within the replica.
func TestRedisDownLocalFallback(t *testing.T) {
	srv := redistest.Start(t)
	tool := newGated()
	close(tool.release)
	d := redisReplicas(t, srv, 1, tool, true)[0]
	srv.Stop()
	for range 2 {
		res, err := d.Call(context.Background(), keyedCall("k", `{}`))
		if err != nil || string(res) != `{"nonce":1}` {
			t.Fatalf("keyed call on the local fallback: %s, %v", res, err)
		}
	}
}
