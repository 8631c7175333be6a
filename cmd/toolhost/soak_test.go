package main

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolhost/toolhost/internal/testkit/testwasm"
	"github.com/toolhost/toolhost/transport"
	"go.uber.org/goleak"
)

// soakConfig makes the breakers trip within the soak: flaky opens after 3
// failures and cools down in 250 ms; the coin's breaker is quick too. The
// sleep tool's breaker never opens, so its timeouts keep happening (and
// the drain at the end has a tool to keep busy).
const soakConfig = `
[dispatch]
concurrency = 32
global_concurrency = 64

[tools."flaky".breaker]
failures = 3
window = "2s"
cooldown = "250ms"
jitter = 0

[tools."guest.coin".breaker]
failures = 8
window = "1s"
cooldown = "200ms"

[tools."sleep"]
concurrency = 16
[tools."sleep".breaker]
failures = 1000000
min_calls = 1000000
`

// soakSettings: TOOLHOST_SOAK is the load's duration (`make reliability`
// sets minutes; `make soak-short` 20 s), and TOOLHOST_SOAK_WORKERS the
// concurrency (default 64).
func soakSettings(t *testing.T) (time.Duration, int) {
	d, workers := 20*time.Second, 64
	if v := os.Getenv("TOOLHOST_SOAK"); v != "" {
		var err error
		if d, err = time.ParseDuration(v); err != nil {
			t.Fatalf("TOOLHOST_SOAK=%q: %v", v, err)
		}
	}
	if v := os.Getenv("TOOLHOST_SOAK_WORKERS"); v != "" {
		var err error
		if workers, err = strconv.Atoi(v); err != nil || workers < 1 {
			t.Fatalf("TOOLHOST_SOAK_WORKERS=%q", v)
		}
	}
	return d, workers
}

// TestSoak runs mixed calls at high concurrency against a real `toolhost
// serve` over Streamable HTTP, with injected transient failures, timeouts
// and breaker trips, then SIGTERMs it mid-load. See docs/RELIABILITY.md
// for what it checks and the figures of a full run.
func TestSoak(t *testing.T) {
	// The soak's figures (breaker trips, timeouts, drain) depend on the
	// machine having CPU to spare: on a loaded 2-core machine it failed
	// while nothing was wrong. So it runs only when asked for, never in
	// `make test`.
	if os.Getenv("TOOLHOST_SOAK") == "" || testing.Short() {
		t.Skip("the soak runs only with TOOLHOST_SOAK set: make reliability (minutes) or make soak-short (20 s)")
	}
	duration, workers := soakSettings(t)
	ignore := goleak.IgnoreCurrent()

	plugins := testwasm.Dir(t,
		testwasm.Go(t, "./host/testdata/misbehave"),
		testwasm.Go(t, "./reliability/testdata/guest"),
		testwasm.WAT(t, "host/testdata/wat/echo.wat"),
	)
	cfg := filepath.Join(t.TempDir(), "soak.toml")
	if err := os.WriteFile(cfg, []byte(soakConfig), 0o644); err != nil {
		t.Fatal(err)
	}
	srv := startServer(t, plugins, "--config", cfg, "--max-calls-per-caller", "0", "--grace", "30s", "--watch=false")
	base := strings.TrimSuffix(srv.url, "/mcp")

	// One pool for every connection the test makes, big enough that 64
	// workers reuse connections rather than open one per call.
	tr := &http.Transport{MaxIdleConns: 256, MaxIdleConnsPerHost: 256}
	hc := &http.Client{Transport: tr}
	defer tr.CloseIdleConnections()
	sessions := connectSessions(t, srv.url, hc, 8)

	// Warm up (every module instantiated once, every session used), then
	// take the server's baseline.
	run := strconv.FormatInt(time.Now().UnixNano(), 36) // idempotency keys unique to this run
	warm, mix := newSoakStats(), soakMix(run)
	for i, cs := range sessions {
		for j, op := range soakMix(run + "-warm") {
			if op.fault == "" {
				warm.runCall(cs, op, fmt.Sprintf("warm-%d-%d", i, j), int64(i))
			}
		}
	}
	start, err := serverMetrics(hc, base, "go_goroutines", "process_resident_memory_bytes")
	if err != nil {
		t.Fatal(err)
	}

	breakers := watchBreakers(t, hc, base)
	probe := startHealthProbe(hc, base)
	stats := newSoakStats()
	began := time.Now()
	stats.load(sessions, mix, workers, began.Add(duration))
	elapsed := time.Since(began)
	probe.finish()
	tr.CloseIdleConnections() // the server's goroutine per idle connection ends with it

	// Goroutines come back once the load stops: connections the workers
	// used go idle, detached executions end. Polled, within a bound: the
	// server is another process and says nothing when it has settled.
	var end map[string]float64
	for deadline := time.Now().Add(15 * time.Second); ; {
		if end, err = serverMetrics(hc, base, "go_goroutines", "process_resident_memory_bytes",
			"toolhost_attempts_total", "toolhost_retries_total"); err != nil {
			t.Fatal(err)
		}
		if end["go_goroutines"] <= start["go_goroutines"]+soakGoroutineSlack || time.Now().After(deadline) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}

	drain := soakDrain(t, srv, sessions, hc, base)

	report := soakReport{duration: elapsed, workers: workers, stats: stats, breakers: breakers.counts(),
		probe: probe, start: start, end: end, drain: drain}
	report.audit, report.auditDup = auditLines(srv.stderr.String())
	report.audit -= int(warm.sent.Load())
	t.Log("\n" + report.markdown())
	report.check(t)

	for _, cs := range sessions {
		cs.Close()
	}
	tr.CloseIdleConnections()
	goleak.VerifyNone(t, ignore)
}

// soakGoroutineSlack is how far the server's goroutine count may end above
// its baseline: the test's event stream and scrape connection, and
// whatever the SDK keeps per session that the warm-up had not yet started.
const soakGoroutineSlack = 16

func connectSessions(t *testing.T, url string, hc *http.Client, n int) []*mcp.ClientSession {
	t.Helper()
	var out []*mcp.ClientSession
	for range n {
		c := mcp.NewClient(&mcp.Implementation{Name: "soak", Version: "test"}, nil)
		cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: hc}, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cs.Close() })
		out = append(out, cs)
	}
	return out
}

// drainResult is what SIGTERM in the middle of calls did.
type drainResult struct {
	inFlight, completed int
	refused             int // calls made after the listener closed that failed
	refusedIn           time.Duration
	exitErr             error
	took                time.Duration
}

// soakDrain starts slow calls, waits until the server has started every one
// of them (dispatch.attempt events), sends SIGTERM, checks that a new call
// fails promptly once the listener is closed, that every call in flight
// gets its result, and that the process exits 0.
func soakDrain(t *testing.T, srv *server, sessions []*mcp.ClientSession, hc *http.Client, base string) drainResult {
	t.Helper()
	const n = 16 // the sleep tool's concurrency cap: all of them in flight at once
	attempts := followEvents(t, srv.url, "dispatch.attempt")
	var wg sync.WaitGroup
	results := make([]string, n)
	for i := range n {
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			res, err := sessions[i%len(sessions)].CallTool(ctx, &mcp.CallToolParams{Name: "sleep",
				Arguments: map[string]any{"ms": 1500}, Meta: mcp.Meta{transport.MetaTimeoutMS: 20000}})
			switch {
			case err != nil:
				results[i] = err.Error()
			case res.IsError:
				results[i] = fmt.Sprint(res.Meta[transport.MetaError])
			default:
				results[i] = textOf(res)
			}
		})
	}
	for started := 0; started < n; {
		select {
		case e := <-attempts:
			if e.Data.Tool == "sleep" {
				started++
			}
		case <-time.After(30 * time.Second):
			t.Fatalf("only %d of %d drain calls started", started, n)
		}
	}
	began := time.Now()
	if err := srv.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	// The listener closes once the signal is handled. Polled, within a
	// bound: nothing else tells a client that a server stopped listening.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		resp, err := hc.Get(base + "/readyz")
		if err != nil {
			break
		}
		resp.Body.Close()
		if time.Now().After(deadline) {
			t.Fatal("the server still listens 10 s after SIGTERM")
		}
	}
	d := drainResult{inFlight: n}
	for _, cs := range sessions[:2] {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		t0 := time.Now()
		_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "wat.echo", Arguments: map[string]any{}})
		took, expired := time.Since(t0), ctx.Err() != nil
		cancel()
		if err == nil || expired {
			t.Errorf("a call after the listener closed: err %v after %v; want a prompt failure", err, took)
			continue
		}
		d.refused++
		d.refusedIn = max(d.refusedIn, took)
	}
	wg.Wait()
	for _, r := range results {
		if r == `"slept"` {
			d.completed++
		} else {
			t.Errorf("a call in flight at SIGTERM got %q", r)
		}
	}
	d.exitErr = srv.cmd.Wait()
	d.took = time.Since(began)
	return d
}

// auditLines counts the server's audit log lines (one per tools/call) and
// the request ids among them that appear more than once.
func auditLines(log string) (lines, dupIDs int) {
	seen := map[string]int{}
	for _, l := range strings.Split(log, "\n") {
		if !strings.Contains(l, `"msg":"call"`) {
			continue
		}
		lines++
		if i := strings.Index(l, `"request_id":"`); i >= 0 {
			rest := l[i+len(`"request_id":"`):]
			seen[rest[:strings.IndexByte(rest, '"')]]++
		}
	}
	for _, n := range seen {
		if n > 1 {
			dupIDs++
		}
	}
	return lines, dupIDs
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
