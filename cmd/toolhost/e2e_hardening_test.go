package main

import (
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolhost/toolhost/dispatcher"
	"github.com/toolhost/toolhost/transport"
)

const (
	aliceToken = "alice-0123456789abcdef0123456789abcdef"
	bobToken   = "bob-fedcba9876543210fedcba9876543210"
)

func tokenFile(t *testing.T) string {
	p := filepath.Join(t.TempDir(), "tokens")
	if err := os.WriteFile(p, []byte("# test tokens\nalice:"+aliceToken+"\nbob:"+bobToken+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestE2EAuth(t *testing.T) {
	srv := startServer(t, pluginsDir(t), "--token-file", tokenFile(t), "--max-calls-per-caller", "1", "--max-args", "200")
	t.Run("no token", func(t *testing.T) {
		_, errOut, code := srv.cli(t, "call", "echo", `{}`)
		if code == 0 || !strings.Contains(errOut, "401") {
			t.Fatalf("exit %d, stderr %q; want a refusal naming 401", code, errOut)
		}
	})
	t.Run("wrong token", func(t *testing.T) {
		_, _, code := srv.cliEnv(t, []string{"TOOLHOST_TOKEN=alice-wrong-0000000000000000000000"}, "call", "echo", `{}`)
		if code == 0 {
			t.Fatal("a wrong token was accepted")
		}
	})
	alice := []string{"TOOLHOST_TOKEN=" + aliceToken}
	bob := []string{"TOOLHOST_TOKEN=" + bobToken}
	t.Run("good token", func(t *testing.T) {
		out, errOut, code := srv.cliEnv(t, alice, "call", "echo", `{"text":"hi"}`)
		if code != 0 || !strings.Contains(out, `"hi"`) {
			t.Fatalf("exit %d, %q %q", code, out, errOut)
		}
	})
	t.Run("keys are scoped by identity", func(t *testing.T) {
		a1, _, _ := srv.cliEnv(t, alice, "call", "--idempotency-key", "k", "nonce")
		a2, _, _ := srv.cliEnv(t, alice, "call", "--idempotency-key", "k", "nonce")
		b1, _, _ := srv.cliEnv(t, bob, "call", "--idempotency-key", "k", "nonce")
		if a1 == "" || a1 != a2 || a1 == b1 {
			t.Fatalf("alice %q then %q, bob %q: one key must replay for alice and not leak to bob", a1, a2, b1)
		}
	})
	t.Run("arguments over the limit", func(t *testing.T) {
		_, errOut, code := srv.cliEnv(t, alice, "call", "echo", `{"text":"`+strings.Repeat("x", 300)+`"}`)
		if code == 0 || !strings.Contains(errOut, `"kind":"schema"`) || !strings.Contains(errOut, "over this server's limit") {
			t.Fatalf("exit %d, stderr %q", code, errOut)
		}
	})
	t.Run("per-caller in-flight cap", func(t *testing.T) {
		var wg sync.WaitGroup
		outs := make([]string, 2)
		for i := range outs {
			wg.Go(func() {
				_, errOut, _ := srv.cliEnv(t, alice, "call", "sleep", `{"ms":1500}`)
				outs[i] = errOut
			})
		}
		wg.Wait()
		limited := 0
		for _, o := range outs {
			if strings.Contains(o, `"kind":"rate_limited"`) {
				limited++
			}
		}
		if limited != 1 {
			t.Fatalf("stderr %q; want exactly one of two concurrent calls refused", outs)
		}
	})
	t.Run("health is open", func(t *testing.T) {
		base := strings.TrimSuffix(srv.url, "/mcp")
		for _, p := range []string{"/healthz", "/readyz"} {
			resp, err := http.Get(base + p)
			if err != nil || resp.StatusCode != 200 {
				t.Fatalf("%s: %v %v", p, resp, err)
			}
			resp.Body.Close()
		}
		resp, err := http.Get(base + "/events")
		if err != nil || resp.StatusCode != http.StatusUnauthorized {
			t.Fatalf("/events without a token: %v %v; want 401", resp, err)
		}
		resp.Body.Close()
	})
}

func TestServeRefusesOpenNonLoopback(t *testing.T) {
	cmd := exec.Command(buildCLI(t), "serve", "--addr", "0.0.0.0:0", "--plugins", t.TempDir())
	cmd.Env = append(os.Environ(), "TOOLHOST_TOKENS=")
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "--token-file") {
		t.Fatalf("err %v, output %q; want a refusal that says how to fix it", err, out)
	}
}

func TestE2ERequestIDAndAudit(t *testing.T) {
	srv := startServer(t, pluginsDir(t))
	cs := srv.client(t)
	res := callTool(t, cs, "echo", map[string]any{"text": "secret-value"},
		mcp.Meta{transport.MetaTraceparent: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"})
	id, _ := res.Meta[transport.MetaRequestID].(string)
	if id == "" {
		t.Fatalf("no request id in _meta: %+v", res.Meta)
	}
	de := envelope(t, callTool(t, cs, "nope", map[string]any{}, nil))
	if de.Kind != dispatcher.KindNotFound {
		t.Fatal(de)
	}
	cs.Close()
	srv.stop(t)
	var line map[string]any
	for _, l := range strings.Split(srv.stderr.String(), "\n") {
		if strings.Contains(l, `"msg":"call"`) && strings.Contains(l, id) {
			if err := json.Unmarshal([]byte(l), &line); err != nil {
				t.Fatal(err)
			}
		}
	}
	if line == nil {
		t.Fatalf("no audit line with request id %s", id)
	}
	if line["tool"] != "echo" || line["outcome"] != "ok" || line["attempts"] != 1.0 || line["traceparent"] == nil {
		t.Fatalf("audit line %v", line)
	}
	if strings.Contains(srv.stderr.String(), "secret-value") {
		t.Fatal("argument values reached the log without --audit-args")
	}
}
