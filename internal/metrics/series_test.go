package metrics

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolhost/toolhost/breaker"
	brkredis "github.com/toolhost/toolhost/breaker/redisstore"
	"github.com/toolhost/toolhost/dispatcher"
	"github.com/toolhost/toolhost/events"
	"github.com/toolhost/toolhost/internal/redisconn"
	"github.com/toolhost/toolhost/internal/testkit/redistest"
	"github.com/toolhost/toolhost/registry"
)

// swapTools is a tool set that is replaced whole, as loader.Live's is on
// a reload.
type swapTools struct {
	cur atomic.Pointer[registry.Registry]
}

func (s *swapTools) Lookup(name string) (*registry.Tool, bool) { return s.cur.Load().Lookup(name) }

func toolsNamed(t *testing.T, names ...string) *registry.Registry {
	t.Helper()
	ok := registry.HandlerFunc(func(context.Context, json.RawMessage) (json.RawMessage, error) { return json.RawMessage(`{}`), nil })
	var tools []*registry.Tool
	for _, n := range names {
		tools = append(tools, &registry.Tool{Name: n, Timeout: time.Second, InputSchema: json.RawMessage(`{"type":"object"}`), Handler: ok})
	}
	reg, err := registry.New(tools)
	if err != nil {
		t.Fatal(err)
	}
	return reg
}

func scrape(m *Metrics) string {
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	body, _ := io.ReadAll(rec.Body)
	return string(body)
}

// Issue 27 item 2: breaker series exist only for the tools served, and go
// with them. A flood of made-up names on the real Redis breaker channel
// (each with a key, so the store reads something) adds none; an opening
// of a served tool does; unloading that tool removes every series that
// names it.
func TestSeriesFollowLoadedTools(t *testing.T) {
	srv := redistest.Start(t)
	conn, err := redisconn.Open(redisconn.Options{URL: srv.URL(), Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	store := brkredis.New(conn)
	t.Cleanup(func() { store.Close(); conn.Close() })

	tools := &swapTools{}
	tools.cur.Store(toolsNamed(t, "a", "b"))
	bus := events.NewBus(nil)
	m := New(Gauges{})
	ctx := context.Background()
	done := make(chan struct{})
	go func() { m.Follow(ctx, bus); close(done) }()
	for !bus.Enabled() { // until Follow has subscribed
		runtime.Gosched()
	}
	opened := bus.Subscribe(4096, dispatcher.EventBreaker)
	d := dispatcher.New(tools, dispatcher.Config{Events: bus, BreakerShared: store, Breaker: breaker.Settings{Cooldown: time.Minute}})
	for _, name := range []string{"a", "b"} {
		if _, err := d.Call(ctx, dispatcher.Call{Tool: name, Args: json.RawMessage(`{}`)}); err != nil {
			t.Fatal(err)
		}
	}

	redis := conn.Client
	for i := range 500 {
		tool := fmt.Sprintf("made-up-%d", i)
		redis.Set(ctx, conn.Key("brk:open:"+tool), "mallory", time.Hour)
		redis.Publish(ctx, conn.Key("brk:opened"), "mallory\n3600000\n"+tool)
	}
	// The marker: b opened on another replica, published after the flood.
	redis.Set(ctx, conn.Key("brk:open:b"), "other", time.Minute)
	redis.Publish(ctx, conn.Key("brk:opened"), "other\n60000\nb")
	select {
	case e := <-opened.C:
		if be := e.Data.(dispatcher.BreakerEvent); be.Tool != "b" || be.To != "open" {
			t.Fatalf("first breaker event %+v, want b opening", be)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("b's opening did not arrive within 10s")
	}
	opened.Close()

	tools.cur.Store(toolsNamed(t, "a")) // b's module is removed
	d.ToolsChanged()
	bus.CloseSubscribers() // Follow has counted what was published, and returns
	<-done
	body := scrape(m)
	if n := strings.Count(body, "\ntoolhost_breaker_state{"); n != 0 {
		t.Errorf("%d breaker series after b went away, want 0 (a never changed state)", n)
	}
	if strings.Contains(body, `tool="b"`) || strings.Contains(body, `made-up`) {
		t.Errorf("series name a tool that is not served:\n%s", grepLines(body, `tool="`))
	}
	if !strings.Contains(body, `toolhost_calls_total{outcome="ok",tool="a"} 1`) {
		t.Errorf("a's series went too:\n%s", grepLines(body, `tool="`))
	}
}

func grepLines(body, sub string) string {
	var out []string
	for _, l := range strings.Split(body, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
