package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolhost/toolhost/dispatcher"
	"github.com/toolhost/toolhost/internal/testkit/redistest"
	"github.com/toolhost/toolhost/internal/testkit/testwasm"
	"github.com/toolhost/toolhost/transport"
)

// fleetOf starts n serve processes sharing rs, each with the extra flags.
func fleetOf(t *testing.T, rs *redistest.Server, n int, plugins string, extra ...string) []*server {
	t.Helper()
	var reps []*server
	for range n {
		reps = append(reps, startServer(t, plugins, append([]string{"--watch=false", "--redis", rs.URL()}, extra...)...))
	}
	return reps
}

// writeConfig writes a config file for the test and returns its path.
func writeConfig(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "toolhost.toml")
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// callWithin is callTool bounded by d: a replica that hangs fails the test
// instead of blocking it.
func callWithin(t *testing.T, d time.Duration, cs *mcp.ClientSession, name string, args any, meta mcp.Meta) *mcp.CallToolResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args, Meta: meta})
	if err != nil {
		t.Fatalf("tools/call %s: %v (a replica hung, or answered with a protocol error)", name, err)
	}
	return res
}

// kill9 ends the server with SIGKILL, as a crash would, and reaps it.
func (s *server) kill9(t *testing.T) {
	t.Helper()
	if err := s.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = s.cmd.Wait()
	<-s.logged
}

// A breaker that opens on one replica refuses on the others, for the
// same cool-down, without their own calls failing.
func TestE2EFleetBreakerOpensEverywhere(t *testing.T) {
	rs := redistest.Start(t)
	// A generous Redis timeout: on a loaded machine a slow command would
	// count as Redis being away, and the opening would stay local.
	conf := writeConfig(t, `
[redis]
timeout = "5s"

[tools."flaky".breaker]
failures = 3
window = "1m"
cooldown = "10m"
jitter = 0
`)
	reps := fleetOf(t, rs, 3, pluginsDir(t), "--config", conf)
	var cs []*mcp.ClientSession
	for _, r := range reps {
		c := r.client(t)
		if res := callWithin(t, time.Minute, c, "flaky", map[string]any{}, nil); res.IsError {
			t.Fatalf("flaky before any failure: %+v", res.Content)
		}
		cs = append(cs, c)
	}
	// Three transient attempts on replica 0 open its breaker.
	if de := envelope(t, callWithin(t, time.Minute, cs[0], "flaky", map[string]any{"fail": true}, nil)); de.Kind != dispatcher.KindTransient {
		t.Fatalf("failing call: %+v, want transient", de)
	}
	for i := 1; i < 3; i++ {
		deadline := time.Now().Add(10 * time.Second)
		for {
			res := callWithin(t, time.Minute, cs[i], "flaky", map[string]any{}, nil)
			if res.IsError {
				de := envelope(t, res)
				if de.Kind != dispatcher.KindCircuitOpen || de.Attempts != 0 || !strings.Contains(de.Message, "cooling down") {
					t.Fatalf("replica %d: %+v, want circuit_open with no attempt", i, de)
				}
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("replica %d still runs flaky 10s after replica 0's breaker opened", i)
			}
			time.Sleep(10 * time.Millisecond) // polling until the opening arrives
		}
		if res := callWithin(t, time.Minute, cs[i], "echo", map[string]any{}, nil); res.IsError {
			t.Fatalf("replica %d refused another tool: %+v", i, res.Content)
		}
	}
}

// The owner of a keyed call dies (kill -9) while the tool waits on its
// upstream: once its lease lapses, another replica's caller hears
// "call again", the retry runs the tool once more, and a third replica
// replays that outcome. No replica hangs meanwhile.
func TestE2EFleetOwnerKilledMidCall(t *testing.T) {
	var hits atomic.Int32
	held := make(chan struct{})
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := hits.Add(1)
		if n == 1 {
			close(held)
			<-r.Context().Done() // the owner's request: held until its process dies
			return
		}
		fmt.Fprintf(w, "answer %d", n)
	}))
	defer upstream.Close()
	module := testwasm.Go(t, "./host/testdata/egress")
	plugins := testwasm.Dir(t, module, testwasm.WAT(t, "host/testdata/wat/echo.wat"))
	conf := writeConfig(t, fmt.Sprintf(`
[redis]
lease = "1s"
timeout = "5s"

[grants.%q]
hosts = ["127.0.0.1"]
schemes = ["http"]
allow_networks = ["127.0.0.0/8"]
`, filepath.Base(module)))
	rs := redistest.Start(t)
	reps := fleetOf(t, rs, 3, plugins, "--config", conf)
	args := map[string]any{"url": upstream.URL}
	meta := mcp.Meta{transport.MetaIdempotencyKey: "crash"}

	owner := reps[0].client(t)
	go func() { // its answer never comes: the process is killed
		_, _ = owner.CallTool(context.Background(), &mcp.CallToolParams{Name: "egress.fetch", Arguments: args, Meta: meta})
	}()
	select {
	case <-held:
	case <-time.After(time.Minute):
		t.Fatal("the owner's call never reached the upstream")
	}
	reps[0].kill9(t)

	cs1, cs2 := reps[1].client(t), reps[2].client(t)
	deadline := time.Now().Add(20 * time.Second)
	var answer string
	for {
		res := callWithin(t, 30*time.Second, cs1, "egress.fetch", args, meta)
		if !res.IsError {
			answer = textOf(res)
			break
		}
		if de := envelope(t, res); de.Kind != dispatcher.KindTransient || time.Now().After(deadline) {
			t.Fatalf("retry after the owner died: %+v, want transient until the lease lapses", de)
		}
		time.Sleep(20 * time.Millisecond) // polling until the lease lapses
	}
	if !strings.Contains(answer, "answer 2") || hits.Load() != 2 {
		t.Fatalf("retry answered %q after %d upstream requests; want the second request's answer", answer, hits.Load())
	}
	if again := textOf(callWithin(t, 30*time.Second, cs2, "egress.fetch", args, meta)); again != answer || hits.Load() != 2 {
		t.Fatalf("a third replica answered %q (%d upstream requests), want the replay %q", again, hits.Load(), answer)
	}
	for i, cs := range []*mcp.ClientSession{cs1, cs2} {
		if res := callWithin(t, 30*time.Second, cs, "wat.echo", map[string]any{}, nil); res.IsError {
			t.Fatalf("replica %d after the crash: %+v", i+1, res.Content)
		}
	}
}

// fleetLoad counts what a load against the fleet saw.
type fleetLoad struct {
	unkeyedOK, unkeyedFailed atomic.Int64
	keyedOK, keyedRefused    atomic.Int64
	mu                       sync.Mutex
	problems                 []string
}

func (l *fleetLoad) problem(format string, a ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.problems) < 10 {
		l.problems = append(l.problems, fmt.Sprintf(format, a...))
	}
}

// Redis stops and restarts under load on three replicas: unkeyed calls
// keep succeeding throughout, keyed calls fail closed with transient while
// Redis is away (none runs twice: each key goes to two replicas at once,
// and two different nonces for one key would be two executions), and
// keyed calls succeed again once Redis is back, without a restart.
//
// Redis keeps its data across the restart (an append-only file, as a
// production Redis should): one that comes back empty forgets the claims
// of executions still running, and a call with such a key after the
// restart runs it again (docs/SCALING.md).
func TestE2EFleetRedisRestartUnderLoad(t *testing.T) {
	rs := redistest.StartDurable(t)
	reps := fleetOf(t, rs, 3, pluginsDir(t))
	var sessions [3][2]*mcp.ClientSession
	for i, r := range reps {
		sessions[i] = [2]*mcp.ClientSession{r.client(t), r.client(t)}
	}
	var load fleetLoad
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var seq atomic.Int64
	for w := range 3 {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				a, b := sessions[w][0], sessions[(w+1)%3][1]
				load.unkeyed(a)
				load.keyedPair(a, b, fmt.Sprintf("load-%d", seq.Add(1)))
			}
		})
	}
	waitFor := func(what string, cond func() bool) {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for !cond() {
			if time.Now().After(deadline) {
				close(stop)
				wg.Wait()
				t.Fatalf("not within 30s: %s (unkeyed ok %d failed %d, keyed ok %d refused %d; %q)", what,
					load.unkeyedOK.Load(), load.unkeyedFailed.Load(), load.keyedOK.Load(), load.keyedRefused.Load(), load.problems)
			}
			time.Sleep(10 * time.Millisecond) // polling the load's counters
		}
	}
	waitFor("keyed calls succeed with Redis up", func() bool { return load.keyedOK.Load() >= 6 })
	rs.Stop()
	unkeyedAtStop := load.unkeyedOK.Load()
	waitFor("keyed calls fail closed with Redis away", func() bool { return load.keyedRefused.Load() >= 6 })
	waitFor("unkeyed calls go on with Redis away", func() bool { return load.unkeyedOK.Load() >= unkeyedAtStop+6 })
	rs.Restart()
	okAtRestart := load.keyedOK.Load()
	waitFor("keyed calls succeed again after Redis came back", func() bool { return load.keyedOK.Load() >= okAtRestart+6 })
	close(stop)
	wg.Wait()
	if n := load.unkeyedFailed.Load(); n != 0 || len(load.problems) != 0 {
		t.Fatalf("%d unkeyed calls failed; problems: %q", n, load.problems)
	}
	// Each replica finds Redis back at its own next probe: one whose
	// load's keyed calls went elsewhere may not have looked yet.
	for i, r := range reps {
		deadline := time.Now().Add(30 * time.Second)
		for {
			code, body := r.readyz(t)
			if code == http.StatusOK && strings.HasPrefix(strings.TrimSpace(body), "ready") {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("replica %d /readyz not ready within 30s after recovery: %d %q", i, code, body)
			}
			time.Sleep(10 * time.Millisecond) // polling the replica's health
		}
	}
}

// call is one call of the load, bounded so that a hung replica shows
// as a problem; it runs on the load's goroutines, so it reports instead
// of failing the test.
func (l *fleetLoad) call(cs *mcp.ClientSession, meta mcp.Meta) (*mcp.CallToolResult, bool) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "nonce", Arguments: map[string]any{}, Meta: meta})
	if err != nil {
		l.problem("nonce: %v (a replica hung, or answered with a protocol error)", err)
		return nil, false
	}
	return res, true
}

func (l *fleetLoad) unkeyed(cs *mcp.ClientSession) {
	res, ok := l.call(cs, nil)
	if !ok {
		return
	}
	if res.IsError {
		l.unkeyedFailed.Add(1)
		l.problem("unkeyed call failed: %s", errText(res))
		return
	}
	l.unkeyedOK.Add(1)
}

// keyedPair sends one key to two replicas at once: both must agree on one
// nonce, or fail with transient.
func (l *fleetLoad) keyedPair(a, b *mcp.ClientSession, key string) {
	var res [2]*mcp.CallToolResult
	var wg sync.WaitGroup
	for i, cs := range []*mcp.ClientSession{a, b} {
		wg.Go(func() { res[i], _ = l.call(cs, mcp.Meta{transport.MetaIdempotencyKey: key}) })
	}
	wg.Wait()
	var nonces []string
	for _, r := range res {
		switch {
		case r == nil:
		case !r.IsError:
			l.keyedOK.Add(1)
			nonces = append(nonces, textOf(r))
		default:
			b, _ := json.Marshal(r.Meta[transport.MetaError])
			var de dispatcher.DispatchError
			if json.Unmarshal(b, &de) != nil || de.Kind != dispatcher.KindTransient {
				l.problem("key %s: %s", key, errText(r))
				continue
			}
			l.keyedRefused.Add(1)
		}
	}
	if len(nonces) == 2 && nonces[0] != nonces[1] {
		l.problem("key %s ran twice: nonces %q", key, nonces)
	}
}

// errText is an isError result's text.
func errText(res *mcp.CallToolResult) string {
	if len(res.Content) == 0 {
		return "(no content)"
	}
	if tc, ok := res.Content[0].(*mcp.TextContent); ok {
		return tc.Text
	}
	return "(not text)"
}
