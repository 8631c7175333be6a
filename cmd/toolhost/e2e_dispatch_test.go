package main

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolhost/toolhost/dispatcher"
	"github.com/toolhost/toolhost/transport"
)

func TestE2EDispatchPolicies(t *testing.T) {
	srv := startServer(t, pluginsDir(t))
	cs := srv.client(t)

	t.Run("transient retried to the cap", func(t *testing.T) {
		de := envelope(t, callTool(t, cs, "flaky", map[string]any{"fail": true}, nil))
		if de.Kind != dispatcher.KindTransient || de.Attempts != 3 {
			t.Fatalf("got %+v, want transient after 3 attempts", de)
		}
	})
	t.Run("no retry of a non-idempotent timeout", func(t *testing.T) {
		de := envelope(t, callTool(t, cs, "sleep", map[string]any{"ms": 60000}, mcp.Meta{transport.MetaTimeoutMS: 100}))
		if de.Kind != dispatcher.KindTimeout || de.Attempts != 1 {
			t.Fatalf("got %+v, want timeout after 1 attempt", de)
		}
	})
	t.Run("budget 0 fails fast", func(t *testing.T) {
		de := envelope(t, callTool(t, cs, "flaky", map[string]any{}, mcp.Meta{transport.MetaBudget: 0}))
		if de.Kind != dispatcher.KindBudgetExceeded || de.Attempts != 0 {
			t.Fatalf("got %+v", de)
		}
	})
	t.Run("budget exhausted with retries left", func(t *testing.T) {
		de := envelope(t, callTool(t, cs, "flaky", map[string]any{"fail": true}, mcp.Meta{transport.MetaBudget: 2}))
		if de.Kind != dispatcher.KindBudgetExceeded || de.Attempts != 2 {
			t.Fatalf("got %+v, want budget_exceeded after 2 attempts", de)
		}
	})
	t.Run("one key, one execution", func(t *testing.T) {
		nonces := make([]string, 2)
		var wg sync.WaitGroup
		for i := range nonces {
			wg.Go(func() {
				res := callTool(t, cs, "nonce", map[string]any{}, mcp.Meta{transport.MetaIdempotencyKey: "e2e-nonce"})
				nonces[i] = textOf(res)
			})
		}
		wg.Wait()
		again := textOf(callTool(t, cs, "nonce", map[string]any{}, mcp.Meta{transport.MetaIdempotencyKey: "e2e-nonce"}))
		if nonces[0] != nonces[1] || nonces[0] != again || len(nonces[0]) < 32 {
			t.Fatalf("nonces %v and replay %s: the guest ran more than once", nonces, again)
		}
		fresh := textOf(callTool(t, cs, "nonce", map[string]any{}, mcp.Meta{transport.MetaIdempotencyKey: "e2e-other"}))
		if fresh == again {
			t.Fatal("a different key replayed another key's result")
		}
		// The CLI flag is the same option.
		out, _, code := srv.cli(t, "call", "--idempotency-key", "e2e-nonce", "nonce")
		if code != 0 || strings.TrimSpace(out) != again {
			t.Fatalf("cli replay %q, want %s", out, again)
		}
	})
	t.Run("key reuse with other arguments refused", func(t *testing.T) {
		callTool(t, cs, "echo", map[string]any{"text": "one"}, mcp.Meta{transport.MetaIdempotencyKey: "e2e-echo"})
		res := callTool(t, cs, "echo", map[string]any{"text": "two"}, mcp.Meta{transport.MetaIdempotencyKey: "e2e-echo"})
		de := envelope(t, res)
		if de.Kind != dispatcher.KindSchema || res.StructuredContent != nil || !strings.Contains(de.Message, "different") {
			t.Fatalf("got %+v", de)
		}
	})
	t.Run("40 concurrent slow calls, at most 8 in flight", func(t *testing.T) {
		evs := followEvents(t, srv.url, "dispatch.")
		var wg sync.WaitGroup
		for range 40 {
			wg.Go(func() {
				if res := callTool(t, cs, "sleep", map[string]any{"ms": 50}, nil); res.IsError {
					t.Errorf("sleep failed: %+v", res.Content)
				}
			})
		}
		wg.Wait()
		inFlight, peak, starts, results := 0, 0, 0, 0
		for results < 40 {
			var e streamedEvent
			select {
			case e = <-evs:
			case <-time.After(30 * time.Second):
				t.Fatalf("only %d of 40 result events arrived", results)
			}
			if e.Data.Tool != "sleep" {
				continue
			}
			switch e.Type {
			case dispatcher.EventAttempt:
				inFlight++
				starts++
				peak = max(peak, inFlight)
			case dispatcher.EventResult:
				inFlight--
				results++
			}
		}
		if starts != 40 || peak > 8 || peak < 2 {
			t.Fatalf("%d attempts seen, peak in flight %d; want 40 attempts and a peak of at most 8", starts, peak)
		}
	})
}

// textOf is a successful result's text content: the tool's JSON.
func textOf(res *mcp.CallToolResult) string {
	if res.IsError || len(res.Content) == 0 {
		return ""
	}
	return res.Content[0].(*mcp.TextContent).Text
}

type streamedEvent struct {
	Seq  uint64 `json:"seq"`
	Type string `json:"type"`
	Data struct {
		Tool string `json:"tool"`
	} `json:"data"`
}

// followEvents subscribes to /events and returns the stream's events on a
// channel. It returns once the stream is open, so nothing published
// afterwards is missed; the stream ends with the test.
func followEvents(t *testing.T, mcpURL, prefix string) <-chan streamedEvent {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	u := strings.TrimSuffix(mcpURL, "/mcp") + "/events?type=" + prefix
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	ch := make(chan streamedEvent, 4096)
	done := make(chan struct{})
	go func() {
		defer close(done)
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				var e streamedEvent
				if json.Unmarshal([]byte(data), &e) == nil {
					select {
					case ch <- e:
					case <-ctx.Done():
						return
					}
				}
			}
		}
	}()
	t.Cleanup(func() {
		cancel()
		<-done
		resp.Body.Close()
	})
	return ch
}

func TestE2EBreakerOpensAndRecovers(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "toolhost.toml")
	const cooldown = 2 * time.Second
	err := os.WriteFile(cfg, []byte(`
[tools."flaky"]
[tools."flaky".breaker]
failures = 3
window = "1m"
cooldown = "2s"
jitter = 0
`), 0o644)
	if err != nil {
		t.Fatal(err)
	}
	srv := startServer(t, pluginsDir(t), "--config", cfg)
	cs := srv.client(t)
	// Three transient attempts: three counted failures open the breaker.
	if de := envelope(t, callTool(t, cs, "flaky", map[string]any{"fail": true}, nil)); de.Kind != dispatcher.KindTransient {
		t.Fatalf("got %+v", de)
	}
	opened := time.Now()
	de := envelope(t, callTool(t, cs, "flaky", map[string]any{}, nil))
	if de.Kind != dispatcher.KindCircuitOpen || de.Attempts != 0 {
		t.Fatalf("got %+v, want circuit_open with 0 attempts", de)
	}
	// Other tools are not affected.
	if res := callTool(t, cs, "echo", map[string]any{}, nil); res.IsError {
		t.Fatal("one tool's breaker must not refuse another tool")
	}
	// The cool-down is wall time in a real server: wait it out once.
	time.Sleep(cooldown - time.Since(opened))
	if res := callTool(t, cs, "flaky", map[string]any{}, nil); res.IsError {
		t.Fatalf("the half-open probe should succeed: %+v", res.Content)
	}
	if res := callTool(t, cs, "flaky", map[string]any{}, nil); res.IsError {
		t.Fatalf("closed again after the probe: %+v", res.Content)
	}
}
