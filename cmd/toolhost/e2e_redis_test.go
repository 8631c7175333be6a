package main

import (
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolhost/toolhost/dispatcher"
	"github.com/toolhost/toolhost/internal/testkit/redistest"
	"github.com/toolhost/toolhost/transport"
)

// readyz returns /readyz's status and body.
func (s *server) readyz(t *testing.T) (int, string) {
	t.Helper()
	res, err := http.Get(strings.TrimSuffix(s.url, "/mcp") + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b)
}

// Three real serve processes share one real redis-server: a key sent to
// all three at once runs once (the guest returns a nonce); the key with
// other arguments is refused on another replica. Then Redis stops: keyed
// calls fail closed with transient and unkeyed calls work, /readyz says
// degraded with a 200; Redis restarts: everything recovers without
// restarting a replica.
func TestE2ERedisFleet(t *testing.T) {
	rs := redistest.Start(t)
	plugins := pluginsDir(t)
	var reps []*server
	for range 3 {
		reps = append(reps, startServer(t, plugins, "--watch=false", "--redis", rs.URL()))
	}

	nonces := make([]string, 3)
	codes := make([]int, 3)
	var wg sync.WaitGroup
	for i, r := range reps {
		wg.Go(func() {
			out, _, code := r.cli(t, "call", "--idempotency-key", "fleet", "nonce")
			nonces[i], codes[i] = strings.TrimSpace(out), code
		})
	}
	wg.Wait()
	if codes[0] != 0 || nonces[0] == "" || nonces[1] != nonces[0] || nonces[2] != nonces[0] {
		t.Fatalf("one key on three replicas: nonces %q, exit codes %v; want one execution's nonce everywhere", nonces, codes)
	}

	cs0, cs1 := reps[0].client(t), reps[1].client(t)
	callTool(t, cs0, "echo", map[string]any{"text": "one"}, mcp.Meta{transport.MetaIdempotencyKey: "fleet-echo"})
	de := envelope(t, callTool(t, cs1, "echo", map[string]any{"text": "two"}, mcp.Meta{transport.MetaIdempotencyKey: "fleet-echo"}))
	if de.Kind != dispatcher.KindSchema || !strings.Contains(de.Message, "different") {
		t.Fatalf("the key with other arguments on another replica: %+v, want schema", de)
	}

	rs.Stop()
	de = envelope(t, callTool(t, cs0, "nonce", map[string]any{}, mcp.Meta{transport.MetaIdempotencyKey: "while-down"}))
	if de.Kind != dispatcher.KindTransient || de.Attempts != 0 {
		t.Fatalf("keyed call with Redis away: %+v, want transient with no attempt", de)
	}
	if res := callTool(t, cs0, "nonce", map[string]any{}, nil); res.IsError {
		t.Fatalf("unkeyed call with Redis away failed: %+v", res)
	}
	if code, body := reps[0].readyz(t); code != http.StatusOK || !strings.HasPrefix(body, "degraded:") {
		t.Fatalf("/readyz with Redis away: %d %q, want 200 degraded", code, body)
	}

	rs.Restart()
	deadline := time.Now().Add(20 * time.Second)
	var first string
	for {
		res := callTool(t, cs0, "nonce", map[string]any{}, mcp.Meta{transport.MetaIdempotencyKey: "while-down"})
		if !res.IsError {
			first = textOf(res)
			break
		}
		if de := envelope(t, res); de.Kind != dispatcher.KindTransient || time.Now().After(deadline) {
			t.Fatalf("keyed call after Redis came back: %+v", de)
		}
		time.Sleep(20 * time.Millisecond) // polling until the replica's probe finds Redis
	}
	if again := textOf(callTool(t, cs1, "nonce", map[string]any{}, mcp.Meta{transport.MetaIdempotencyKey: "while-down"})); again != first {
		t.Fatalf("after recovery another replica answered %q, want the replay %q", again, first)
	}
	// "ready", perhaps with the modules still warming up after it (serve
	// --warm-up): not degraded.
	if code, body := reps[0].readyz(t); code != http.StatusOK || !strings.HasPrefix(body, "ready") {
		t.Fatalf("/readyz after recovery: %d %q", code, body)
	}
}

// Two serve processes share one quota through Redis (one given --redis,
// the other [redis] url in its config): three grants in all, not three
// each; a 429 reported on one shows as blocked in the other's status.
func TestE2ERedisGovernorShared(t *testing.T) {
	rs := redistest.Start(t)
	conf := filepath.Join(t.TempDir(), "toolhost.toml")
	quota := "[quotas.up]\ncapacity = 3\ninterval = \"1h\"\nburst = 3\n"
	if err := os.WriteFile(conf, []byte(quota), 0o644); err != nil {
		t.Fatal(err)
	}
	confRedis := filepath.Join(t.TempDir(), "redis.toml")
	if err := os.WriteFile(confRedis, []byte(quota+"\n[redis]\nurl = \""+rs.URL()+"\"\nreplicas = 2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	plugins := pluginsDir(t)
	reps := []*server{
		startServer(t, plugins, "--watch=false", "--config", conf, "--redis", rs.URL()),
		startServer(t, plugins, "--watch=false", "--config", confRedis),
	}
	for i, r := range []int{0, 1, 0} {
		if out, errOut, code := reps[r].cli(t, "governor", "acquire", "--quota", "up", "--priority", "critical", "--wait", "0s"); code != 0 {
			t.Fatalf("grant %d on replica %d: %d\n%s\n%s", i, r, code, out, errOut)
		}
	}
	for r := range reps {
		if _, errOut, code := reps[r].cli(t, "governor", "acquire", "--quota", "up", "--priority", "critical", "--wait", "0s"); code != 1 || !strings.Contains(errOut, `"kind":"rate_limited"`) {
			t.Fatalf("a fourth grant on replica %d: %d\n%s; the replicas must share one pool of 3", r, code, errOut)
		}
	}
	if out, errOut, code := reps[0].cli(t, "governor", "report", "--quota", "up", "--status", "429", "--retry-after", "10m"); code != 0 || !strings.Contains(out, `"mode":"blocked"`) {
		t.Fatalf("report: %d\n%s\n%s", code, out, errOut)
	}
	out, errOut, code := reps[1].cli(t, "governor", "status")
	if code != 0 || !strings.Contains(out, "blocked") {
		t.Fatalf("the other replica's status after a 429: %d\n%s\n%s", code, out, errOut)
	}
}
