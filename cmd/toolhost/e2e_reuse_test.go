package main

import (
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolhost/toolhost/internal/testkit/testwasm"
)

// TestReuseEndToEnd: the token's identity travels from the transport
// through the dispatcher to the host, so each caller's calls of a tool
// that declares reuse share that caller's warm instance and never
// another's (counter.wasm counts its calls in a global); list and /metrics
// show the mode and the pools; serve --reuse=never turns it off.
func TestReuseEndToEnd(t *testing.T) {
	plugins := t.TempDir()
	wasm, err := os.ReadFile(testwasm.WAT(t, "host/testdata/wat/counter.wat"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(plugins, "counter.wasm"), wasm, 0o644); err != nil {
		t.Fatal(err)
	}
	tokens := boundsTokens(t)
	call := func(srv *server, token string) string {
		t.Helper()
		out, errOut, code := srv.cliEnv(t, []string{"TOOLHOST_TOKEN=" + token}, "call", "counter.reuse")
		if code != 0 {
			t.Fatalf("call: exit %d: %s", code, errOut)
		}
		return strings.TrimSpace(out)
	}
	// rows is `toolhost list --json`, by manifest name.
	rows := func(srv *server) map[string]listedTool {
		t.Helper()
		out, errOut, code := srv.cliEnv(t, []string{"TOOLHOST_TOKEN=" + opsToken}, "list", "--json")
		if code != 0 {
			t.Fatalf("list: exit %d: %s", code, errOut)
		}
		var rs []listedTool
		if err := json.Unmarshal([]byte(out), &rs); err != nil {
			t.Fatal(err)
		}
		m := map[string]listedTool{}
		for _, r := range rs {
			m[r.Manifest] = r
		}
		return m
	}
	// modes is `toolhost list --json`'s instances, by manifest name.
	modes := func(srv *server) map[string]string {
		t.Helper()
		out, errOut, code := srv.cliEnv(t, []string{"TOOLHOST_TOKEN=" + opsToken}, "list", "--json")
		if code != 0 {
			t.Fatalf("list: exit %d: %s", code, errOut)
		}
		var rows []listedTool
		if err := json.Unmarshal([]byte(out), &rows); err != nil {
			t.Fatal(err)
		}
		m := map[string]string{}
		for _, r := range rows {
			m[r.Manifest] = r.Instances
		}
		return m
	}

	t.Run("auto", func(t *testing.T) {
		// --interpret=false: the module has no manifest section, so with the
		// interpreter it is listed before it compiles, and its calls until
		// then get fresh instances, as every interpreted call does.
		srv := startServer(t, plugins, "--token-file", tokens, "--interpret=false")
		var got []string
		for _, token := range []string{aliceToken, aliceToken, bobToken, aliceToken, bobToken} {
			got = append(got, call(srv, token))
		}
		if s := strings.Join(got, " "); s != "1 2 1 3 2" {
			t.Errorf("alice, alice, bob, alice, bob counted %s, want 1 2 1 3 2", s)
		}
		if m := modes(srv); m["counter.reuse"] != "reuse" || m["counter.fresh"] != "fresh" {
			t.Errorf("list says %v, want counter.reuse reuse and counter.fresh fresh", m)
		}
		// Two callers' pools: each has its used instance and a spare (or
		// the spare still warming); none in a call.
		if w := rows(srv)["counter.reuse"].Warm; w["callers"] != 2 || w["busy"] != 0 || w["idle"]+w["warming"] < 2 {
			t.Errorf("list says warm %v, want 2 callers' pools, nothing busy", w)
		}
		if w := rows(srv)["counter.fresh"].Warm; w != nil {
			t.Errorf("list says counter.fresh has warm instances %v", w)
		}
		if out, _, _ := srv.cliEnv(t, []string{"TOOLHOST_TOKEN=" + opsToken}, "list"); !strings.Contains(out, "INSTANCES") {
			t.Errorf("the list table has no INSTANCES column:\n%s", out)
		}
		req, _ := http.NewRequest("GET", strings.TrimSuffix(srv.url, "/mcp")+"/metrics", nil)
		req.Header.Set("Authorization", "Bearer "+opsToken)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		for _, want := range []string{`toolhost_warm_pools{tool="counter.reuse"} 2`,
			`toolhost_warm_instances{state="busy",tool="counter.reuse"} 0`,
			`toolhost_tool_instances{mode="reuse",tool="counter.reuse"} 1`,
			`toolhost_tool_instances{mode="fresh",tool="counter.fresh"} 1`} {
			if !strings.Contains(string(body), want) {
				t.Errorf("/metrics lacks %q", want)
			}
		}
	})
	t.Run("never", func(t *testing.T) {
		srv := startServer(t, plugins, "--token-file", tokens, "--reuse=never")
		if a, b := call(srv, aliceToken), call(srv, aliceToken); a != "1" || b != "1" {
			t.Errorf("alice counted %s %s, want 1 1", a, b)
		}
		if m := modes(srv); m["counter.reuse"] != "fresh" {
			t.Errorf("list says %v, want counter.reuse fresh", m)
		}
	})
}
