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
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolhost/toolhost/internal/testkit/testwasm"
	"github.com/toolhost/toolhost/transport"
)

// TestRustGuest: the Rust SDK's example tool (tools-src-rust/csv), built
// from source offline with cargo, served and called end to end: a result
// (quoted fields, column types and statistics), a schema error result, and
// a log note reaching an MCP client.
func TestRustGuest(t *testing.T) {
	wasm := testwasm.Rust(t, "tools-src-rust/csv")
	srv := startServer(t, testwasm.Dir(t, wasm))

	out, errOut, code := srv.cli(t, "call", "csv.parse", `{"text":"city,pop,coastal\n\"Brest, FR\",139000,true\n\"Say \"\"hi\"\"\",,false\nLyon,513000,false\n","max_rows":2}`)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var got struct {
		Columns []struct {
			Name, Type    string
			Values, Empty int
			Min, Max      *float64
		}
		RowCount  int `json:"row_count"`
		Rows      [][]string
		Truncated bool
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("%s: %v", out, err)
	}
	if got.RowCount != 3 || len(got.Rows) != 2 || !got.Truncated || got.Rows[0][0] != "Brest, FR" || got.Rows[1][0] != `Say "hi"` ||
		len(got.Columns) != 3 || got.Columns[1].Type != "integer" || got.Columns[1].Empty != 1 ||
		got.Columns[1].Max == nil || *got.Columns[1].Max != 513000 || got.Columns[2].Type != "boolean" {
		t.Fatalf("csv.parse = %s", out)
	}

	// A ragged record is the tool's schema error, with its message.
	_, errOut, code = srv.cli(t, "call", "csv.parse", `{"text":"a,b\n1,2,3\n"}`)
	if code == 0 || !strings.Contains(errOut, `"kind":"schema"`) || !strings.Contains(errOut, "record 2 has 3 fields, want 2") {
		t.Fatalf("ragged CSV: exit %d, stderr %s", code, errOut)
	}

	// The tool's log note reaches a client that set a level.
	notes := make(chan string, 4)
	c := mcp.NewClient(&mcp.Implementation{Name: "rust-test", Version: "0"}, &mcp.ClientOptions{
		LoggingMessageHandler: func(_ context.Context, r *mcp.LoggingMessageRequest) {
			b, _ := json.Marshal(r.Params.Data)
			notes <- string(r.Params.Level) + " " + string(b)
		},
	})
	cs, err := c.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: srv.url}, &mcp.ClientSessionOptions{ProtocolVersion: transport.Revision20251125})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if err := cs.SetLoggingLevel(t.Context(), &mcp.SetLoggingLevelParams{Level: "info"}); err != nil {
		t.Fatal(err)
	}
	r, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "csv_parse", Arguments: map[string]any{"text": "x\n1\n2\n"}})
	if err != nil || r.IsError {
		t.Fatalf("call: %v %+v", err, r)
	}
	if n := <-notes; n != `info "parsed 2 records"` {
		t.Fatalf("note %q, want the tool's info log", n)
	}
}

// TestRustGuestEgress: csv.fetch reaches a loopback upstream through the
// Rust SDK's egress only as far as its grant allows: a 200 is parsed, a
// 503 is the SDK's transient error (retried by the dispatcher), and a
// host outside the grant is the host's refusal.
func TestRustGuestEgress(t *testing.T) {
	wasm := testwasm.Rust(t, "tools-src-rust/csv")
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/busy" {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		fmt.Fprint(w, "n,sq\n2,4\n3,9\n")
	}))
	defer upstream.Close()
	conf := filepath.Join(t.TempDir(), "toolhost.toml")
	if err := os.WriteFile(conf, []byte(fmt.Sprintf(`
[grants.%q]
hosts = ["127.0.0.1"]
schemes = ["http"]
allow_networks = ["127.0.0.0/8"]
`, filepath.Base(wasm))), 0o644); err != nil {
		t.Fatal(err)
	}
	srv := startServer(t, testwasm.Dir(t, wasm), "--config", conf)

	out, errOut, code := srv.cli(t, "call", "csv.fetch", fmt.Sprintf(`{"url":%q}`, upstream.URL+"/sq.csv"))
	if code != 0 || !strings.Contains(out, `"row_count":2`) || !strings.Contains(out, `"mean":6.5`) {
		t.Fatalf("fetch: exit %d\n%s\n%s", code, out, errOut)
	}
	_, errOut, code = srv.cli(t, "call", "csv.fetch", fmt.Sprintf(`{"url":%q}`, upstream.URL+"/busy"))
	if code == 0 || !strings.Contains(errOut, `"kind":"transient"`) || !strings.Contains(errOut, "upstream answered 503") {
		t.Fatalf("503: exit %d, stderr %s", code, errOut)
	}
	denied := strings.Replace(upstream.URL, "127.0.0.1", "localhost", 1)
	_, errOut, code = srv.cli(t, "call", "csv.fetch", fmt.Sprintf(`{"url":%q}`, denied))
	if code == 0 || !strings.Contains(errOut, "egress denied (grant hosts)") {
		t.Fatalf("ungranted host: exit %d, stderr %s", code, errOut)
	}
}
