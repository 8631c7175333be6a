package main

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/toolhost/toolhost/governor"
	"github.com/toolhost/toolhost/internal/testkit/testwasm"
)

// serve with a quota and an egress grant: an external agent (the CLI) and a
// tool's egress draw from one pool through /rpc and the dispatcher; a
// refusal is a rate_limited envelope; a reported 429 blocks the quota.
func TestE2EGovernor(t *testing.T) {
	var hits atomic.Int32
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		fmt.Fprint(w, "upstream ok")
	}))
	defer upstream.Close()
	module := testwasm.Go(t, "./host/testdata/egress")
	plugins := testwasm.Dir(t, module)
	conf := filepath.Join(t.TempDir(), "toolhost.toml")
	err := os.WriteFile(conf, []byte(fmt.Sprintf(`
[quotas.up]
capacity = 2
interval = "1m"
burst = 2
hosts = ["127.0.0.1"]

[grants.%q]
hosts = ["127.0.0.1"]
schemes = ["http"]
allow_networks = ["127.0.0.0/8"]
`, filepath.Base(module))), 0o644)
	if err != nil {
		t.Fatal(err)
	}
	s := startServer(t, plugins, "--config", conf)

	out, errOut, code := s.cli(t, "governor", "status")
	if code != 0 || !strings.Contains(out, "up") || !strings.Contains(out, "normal") || !strings.Contains(out, "2 per 1m0s, burst 2") {
		t.Fatalf("governor status: %d\n%s\n%s", code, out, errOut)
	}
	out, errOut, code = s.cli(t, "governor", "acquire", "--quota", "up", "--priority", "interactive", "--agent", "e2e")
	if code != 0 || !strings.Contains(out, `"priority":"interactive"`) {
		t.Fatalf("acquire: %d\n%s\n%s", code, out, errOut)
	}
	out, errOut, code = s.cli(t, "call", "egress.fetch", fmt.Sprintf(`{"url":%q}`, upstream.URL))
	if code != 0 || !strings.Contains(out, "upstream ok") || hits.Load() != 1 {
		t.Fatalf("call through egress: %d\n%s\n%s", code, out, errOut)
	}
	// Per agent: the CLI's --agent and the anonymous caller of the tool,
	// whose egress request drew.
	out, errOut, code = s.cli(t, "governor", "status", "--json")
	var st governor.StatusResult
	if code != 0 || json.Unmarshal([]byte(out), &st) != nil || len(st.Quotas) != 1 ||
		!maps.Equal(st.Quotas[0].Agents, map[string]governor.AgentUsage{"e2e": {Used: 1}, "": {Used: 1}}) {
		t.Fatalf("governor status --json: %d\n%s\n%s", code, out, errOut)
	}
	// The pool is empty: the agent is refused at once, and so is the tool.
	_, errOut, code = s.cli(t, "governor", "acquire", "--quota", "up", "--wait", "0s")
	if code != 1 || !strings.Contains(errOut, `"kind":"rate_limited"`) || !strings.Contains(errOut, `"retry_after_ms":`) {
		t.Fatalf("acquire on an empty pool: %d\n%s", code, errOut)
	}
	_, errOut, code = s.cli(t, "call", "--budget", "1", "egress.fetch", fmt.Sprintf(`{"url":%q}`, upstream.URL))
	if code != 1 || !strings.Contains(errOut, "egress rate_limited") || hits.Load() != 1 {
		t.Fatalf("call on an empty pool: %d, %d upstream hits\n%s", code, hits.Load(), errOut)
	}
	out, errOut, code = s.cli(t, "governor", "report", "--quota", "up", "--status", "429", "--retry-after", "30s")
	if code != 0 || !strings.Contains(out, `"mode":"blocked"`) {
		t.Fatalf("report: %d\n%s\n%s", code, out, errOut)
	}
	_, errOut, code = s.cli(t, "governor", "acquire", "--quota", "nope")
	if code != 1 || !strings.Contains(errOut, `"kind":"schema"`) || !strings.Contains(errOut, "quotas: up") {
		t.Fatalf("acquire on an unknown quota: %d\n%s", code, errOut)
	}
}
