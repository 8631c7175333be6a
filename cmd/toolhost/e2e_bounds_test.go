package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

const opsToken = "ops-00112233445566778899aabbccddeeff"

// boundsTokens is a token file with alice, bob and ops.
func boundsTokens(t *testing.T) string {
	p := filepath.Join(t.TempDir(), "tokens")
	body := "alice:" + aliceToken + "\nbob:" + bobToken + "\nops:" + opsToken + "\n"
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// openEvents GETs /events with a token and returns the response (the
// caller checks the status) and, for a 200, the stream's data lines on a
// channel, which closes when the stream ends. The stream ends with the
// test. The handler subscribes before it sends its headers, so nothing
// published after openEvents returns is missed.
func openEvents(t *testing.T, mcpURL, token, query string) (*http.Response, <-chan string) {
	t.Helper()
	// The watchdog turns an event that never comes into a failure (the
	// stream ends) rather than a hang; it is no measure of speed.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimSuffix(mcpURL, "/mcp")+"/events"+query, nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	lines := make(chan string, 4096)
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer close(lines)
		if resp.StatusCode != http.StatusOK {
			return
		}
		br := bufio.NewReader(resp.Body)
		if first, _ := br.ReadString('\n'); !strings.HasPrefix(first, ": toolhost events") {
			return
		}
		sc := bufio.NewScanner(br)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				lines <- data
			}
		}
	}()
	t.Cleanup(func() {
		cancel()
		<-done
		resp.Body.Close()
	})
	return resp, lines
}

// until reads a stream's events up to and including the first for which
// stop is true, and returns them raw. An event for which forbid is true
// fails the test at once.
func until(t *testing.T, lines <-chan string, stop, forbid func(raw string) bool) []string {
	t.Helper()
	var got []string
	for l := range lines {
		if forbid != nil && forbid(l) {
			t.Fatalf("the stream carries %s", l)
		}
		got = append(got, l)
		if stop(l) {
			return got
		}
	}
	t.Fatalf("the stream ended before the expected event; got %q", got)
	return nil
}

// bobsResult is true for the dispatch.result of bob's echo call: every
// stream that may see it sees everything published before it first.
func bobsResult(raw string) bool {
	return strings.Contains(raw, `"type":"dispatch.result"`) && strings.Contains(raw, `"caller":"bob"`)
}

// Regression (issue 10 finding 8): alice's plan arguments and results
// (here an HMAC key) reach neither the log nor another identity's /events
// stream. bob sees only his own calls; an operator (--operator) sees
// everyone's calls, without values; alice sees her own, without values.
func TestE2EEventsScopedAndRedacted(t *testing.T) {
	const secret = "hmac-key-5f0e1d2c3b4a"
	srv := startServer(t, pluginsDir(t), "--token-file", boundsTokens(t), "--operator", "ops")
	_, bobLines := openEvents(t, srv.url, bobToken, "")
	_, opsLines := openEvents(t, srv.url, opsToken, "")
	_, aliceLines := openEvents(t, srv.url, aliceToken, "")

	plan := `{"goal":"sign","steps":[{"id":1,"tool_name":"echo","args":{"text":"` + secret + `"}}]}`
	out, errOut, code := srv.cliEnv(t, []string{"TOOLHOST_TOKEN=" + aliceToken}, "call", "toolhost.plan", plan)
	if code != 0 || !strings.Contains(out, secret) {
		t.Fatalf("alice's plan: exit %d, %q %q", code, out, errOut)
	}
	if _, errOut, code := srv.cliEnv(t, []string{"TOOLHOST_TOKEN=" + bobToken}, "call", "echo", `{"text":"bob"}`); code != 0 {
		t.Fatalf("bob's call: exit %d, %q", code, errOut)
	}

	leaks := func(raw string) bool {
		return strings.Contains(raw, `"caller":"alice"`) || strings.Contains(raw, secret)
	}
	until(t, bobLines, bobsResult, leaks)
	hasSecret := func(raw string) bool { return strings.Contains(raw, secret) }
	ops := until(t, opsLines, bobsResult, hasSecret)
	sawAlice := false
	for _, l := range ops {
		sawAlice = sawAlice || (strings.Contains(l, `"caller":"alice"`) && strings.Contains(l, `"type":"step.succeeded"`))
	}
	if !sawAlice {
		t.Errorf("the operator did not see alice's plan: %q", ops)
	}
	until(t, aliceLines, func(raw string) bool { return strings.Contains(raw, `"type":"session.end"`) }, hasSecret)
	srv.stop(t)
	if strings.Contains(srv.stderr.String(), secret) {
		t.Errorf("the log carries alice's plan arguments without --audit-args")
	}
}

// With --audit-args the operator asked for values: alice's own stream
// carries her plan's arguments and results; bob's still carries nothing
// of hers.
func TestE2EEventsValuesWithAuditArgs(t *testing.T) {
	const secret = "hmac-key-a1b2c3d4"
	srv := startServer(t, pluginsDir(t), "--token-file", boundsTokens(t), "--audit-args")
	_, bobLines := openEvents(t, srv.url, bobToken, "")
	_, aliceLines := openEvents(t, srv.url, aliceToken, "?type=step.")
	plan := `{"goal":"sign","steps":[{"id":1,"tool_name":"echo","args":{"text":"` + secret + `"}}]}`
	if _, errOut, code := srv.cliEnv(t, []string{"TOOLHOST_TOKEN=" + aliceToken}, "call", "toolhost.plan", plan); code != 0 {
		t.Fatalf("alice's plan: exit %d, %q", code, errOut)
	}
	if _, errOut, code := srv.cliEnv(t, []string{"TOOLHOST_TOKEN=" + bobToken}, "call", "echo", `{"text":"bob"}`); code != 0 {
		t.Fatalf("bob's call: exit %d, %q", code, errOut)
	}
	succeeded := until(t, aliceLines, func(raw string) bool { return strings.Contains(raw, `"type":"step.succeeded"`) }, nil)
	var e struct {
		Data struct {
			Result json.RawMessage `json:"result"`
		} `json:"data"`
	}
	if err := json.Unmarshal([]byte(succeeded[len(succeeded)-1]), &e); err != nil || !strings.Contains(string(e.Data.Result), secret) {
		t.Errorf("with --audit-args, alice's step.succeeded has no result: %s", succeeded[len(succeeded)-1])
	}
	until(t, bobLines, bobsResult, func(raw string) bool {
		return strings.Contains(raw, `"caller":"alice"`) || strings.Contains(raw, secret)
	})
}

// Regression (issue 10 finding 10): event streams are bounded per identity
// and in total, and so are a stream's type prefixes; a refusal says which
// bound.
func TestE2EEventStreamLimits(t *testing.T) {
	srv := startServer(t, pluginsDir(t), "--token-file", boundsTokens(t),
		"--max-event-streams-per-identity", "2", "--max-event-streams", "3")
	refused := func(resp *http.Response, status int, want string) {
		t.Helper()
		body, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != status || !strings.Contains(string(body), want) {
			t.Errorf("status %d, body %q; want %d naming %q", resp.StatusCode, body, status, want)
		}
	}
	openEvents(t, srv.url, aliceToken, "")
	openEvents(t, srv.url, aliceToken, "?type=dispatch.")
	resp, _ := openEvents(t, srv.url, aliceToken, "")
	refused(resp, http.StatusTooManyRequests, "limit per identity")
	// toolhost events relays which limit refused it.
	_, errOut, code := srv.cliEnv(t, []string{"TOOLHOST_TOKEN=" + aliceToken}, "events")
	if code == 0 || !strings.Contains(errOut, "429") || !strings.Contains(errOut, "limit per identity") {
		t.Errorf("toolhost events over the limit: exit %d, stderr %q", code, errOut)
	}
	openEvents(t, srv.url, bobToken, "")
	resp, _ = openEvents(t, srv.url, opsToken, "")
	refused(resp, http.StatusTooManyRequests, "its limit")

	prefixes := make([]string, 17)
	for i := range prefixes {
		prefixes[i] = "p" + strings.Repeat("x", i)
	}
	resp, _ = openEvents(t, srv.url, bobToken, "?type="+strings.Join(prefixes, ","))
	refused(resp, http.StatusBadRequest, "more than 16 type prefixes")
}

// Regression (issue 10 finding 11): one identity's keyed calls cannot grow
// the idempotency store past its bound: the next new key is rate_limited,
// naming the bound, while its held keys replay and other identities'
// keys are unaffected.
func TestE2EIdempotencyBound(t *testing.T) {
	srv := startServer(t, pluginsDir(t), "--token-file", boundsTokens(t), "--idempotency-max-keys-per-identity", "2")
	alice := []string{"TOOLHOST_TOKEN=" + aliceToken}
	first, _, _ := srv.cliEnv(t, alice, "call", "--idempotency-key", "k1", "nonce")
	if _, errOut, code := srv.cliEnv(t, alice, "call", "--idempotency-key", "k2", "nonce"); code != 0 {
		t.Fatalf("second key: %q", errOut)
	}
	_, errOut, code := srv.cliEnv(t, alice, "call", "--idempotency-key", "k3", "nonce")
	if code == 0 || !strings.Contains(errOut, `"kind":"rate_limited"`) || !strings.Contains(errOut, "keys per caller") {
		t.Fatalf("third key: exit %d, stderr %q; want rate_limited naming the per-caller bound", code, errOut)
	}
	if again, _, _ := srv.cliEnv(t, alice, "call", "--idempotency-key", "k1", "nonce"); first == "" || again != first {
		t.Errorf("a held key did not replay: %q then %q", first, again)
	}
	if _, errOut, code := srv.cliEnv(t, []string{"TOOLHOST_TOKEN=" + bobToken}, "call", "--idempotency-key", "k3", "nonce"); code != 0 {
		t.Errorf("bob refused by alice's bound: %q", errOut)
	}
}
