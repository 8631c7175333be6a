package main

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolhost/toolhost/transport"
)

// TestWebDeleteAsksFirst: web.delete, a destructive tool of a real
// module, asks the user before it sends anything, at both revisions
// (input_required and a retry at 2026-07-28, elicitation/create at
// 2025-11-25), from the Go SDK's client and the TypeScript SDK v2's
// (conformance/clients/elicit.mjs); the DELETE goes out only on the user's
// confirmation, and a client that cannot be asked is told so.
func TestWebDeleteAsksFirst(t *testing.T) {
	w := webDeleteServer(t, "")
	srv, upURL, cfg, pemFile, deletes := w.srv, w.upURL, w.cfg, w.pem, w.deletes
	connect := func(t *testing.T, version string, answer *mcp.ElicitResult) *mcp.ClientSession {
		var opts *mcp.ClientOptions
		if answer != nil {
			opts = &mcp.ClientOptions{ElicitationHandler: func(_ context.Context, r *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
				if !strings.Contains(r.Params.Message, "DELETE to "+upURL+"/items/7") {
					t.Errorf("asked %q", r.Params.Message)
				}
				return answer, nil
			}}
		}
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "e2e", Version: "test"}, opts).Connect(t.Context(),
			&mcp.StreamableClientTransport{Endpoint: srv.url}, &mcp.ClientSessionOptions{ProtocolVersion: version})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cs.Close() })
		return cs
	}
	args := map[string]any{"url": upURL + "/items/7"}
	t.Run("stdio", func(t *testing.T) {
		// Over stdio the elicitation/create request shares the pipe with
		// the call it belongs to.
		for _, version := range []string{transport.Revision20260728, transport.Revision20251125} {
			cmd := exec.Command(buildCLI(t), "serve", "--stdio", "--plugins", webPlugins(t), "--config", cfg,
				"--cache-dir", testCache)
			cmd.Env = append(os.Environ(), "SSL_CERT_FILE="+pemFile)
			c := mcp.NewClient(&mcp.Implementation{Name: "e2e-stdio", Version: "test"}, &mcp.ClientOptions{
				ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
					return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"confirm": true}}, nil
				}})
			cs, err := c.Connect(t.Context(), &mcp.CommandTransport{Command: cmd}, &mcp.ClientSessionOptions{ProtocolVersion: version})
			if err != nil {
				t.Fatal(err)
			}
			before := deletes.Load()
			res := callTool(t, cs, "web_delete", args, nil)
			b, _ := json.Marshal(res.StructuredContent)
			if res.IsError || !strings.Contains(string(b), `"deleted":true`) || deletes.Load() != before+1 {
				t.Errorf("%s over stdio: %s %+v", version, b, res.Content)
			}
			cs.Close()
		}
	})
	for _, version := range []string{transport.Revision20260728, transport.Revision20251125} {
		t.Run(version, func(t *testing.T) {
			for _, tc := range []struct {
				name    string
				answer  *mcp.ElicitResult
				deleted bool
			}{
				{"decline", &mcp.ElicitResult{Action: "decline"}, false},
				{"cancel", &mcp.ElicitResult{Action: "cancel"}, false},
				{"accept unchecked", &mcp.ElicitResult{Action: "accept", Content: map[string]any{"confirm": false}}, false},
				{"accept", &mcp.ElicitResult{Action: "accept", Content: map[string]any{"confirm": true}}, true},
			} {
				t.Run(tc.name, func(t *testing.T) {
					before := deletes.Load()
					res := callTool(t, connect(t, version, tc.answer), "web_delete", args, nil)
					if res.IsError || res.NeedsInput() {
						t.Fatalf("result %+v", res)
					}
					var got struct {
						Deleted bool
						Status  int
					}
					b, _ := json.Marshal(res.StructuredContent)
					if err := json.Unmarshal(b, &got); err != nil {
						t.Fatal(err)
					}
					sent := deletes.Load() - before
					if got.Deleted != tc.deleted || sent != map[bool]int32{true: 1, false: 0}[tc.deleted] ||
						(tc.deleted && got.Status != http.StatusNoContent) {
						t.Errorf("result %s with %d DELETEs sent", b, sent)
					}
				})
			}
			t.Run("TypeScript SDK v2", func(t *testing.T) {
				var got struct {
					Results []struct {
						Asked      int
						Message    string
						IsError    bool
						Structured struct{ Deleted bool }
					}
					Unable struct {
						IsError bool
						Text    string
					}
				}
				before := deletes.Load()
				runNode(t, clientsDir(t), "elicit.mjs", map[string]any{"url": srv.url, "revision": version, "tool": "web_delete", "args": args,
					"answers": []any{map[string]any{"action": "decline"}, map[string]any{"action": "cancel"},
						map[string]any{"action": "accept", "content": map[string]any{"confirm": true}}}}, &got)
				if len(got.Results) != 3 {
					t.Fatalf("results %+v", got.Results)
				}
				for i, r := range got.Results {
					if r.Asked != 1 || r.IsError || r.Structured.Deleted != (i == 2) || !strings.Contains(r.Message, "DELETE to") {
						t.Errorf("answer %d: %+v", i, r)
					}
				}
				if sent := deletes.Load() - before; sent != 1 {
					t.Errorf("%d DELETEs sent for one confirmation", sent)
				}
				if !got.Unable.IsError || !strings.Contains(got.Unable.Text, "no elicitation capability") {
					t.Errorf("a client without elicitation: %+v", got.Unable)
				}
			})
			t.Run("client cannot be asked", func(t *testing.T) {
				before := deletes.Load()
				res := callTool(t, connect(t, version, nil), "web_delete", args, nil)
				if !res.IsError || !strings.Contains(res.Content[0].(*mcp.TextContent).Text, "no elicitation capability") {
					t.Errorf("result %+v", res.Content[0])
				}
				if deletes.Load() != before {
					t.Error("a DELETE went out unconfirmed")
				}
			})
		})
	}
}

// webDelete is the web plugins served with a grant for GET and DELETE to a
// local TLS upstream where only DELETE /items/7 exists.
type webDelete struct {
	srv      *server
	upURL    string        // the upstream's base URL
	cfg, pem string        // the config file, the upstream's CA for SSL_CERT_FILE
	deletes  *atomic.Int32 // the DELETEs that reached the upstream
}

// webDeleteServer starts a webDelete; conf is prepended to its config file.
func webDeleteServer(t *testing.T, conf string) webDelete {
	t.Helper()
	deletes := new(atomic.Int32)
	up, pemFile := webUpstream(t)
	up.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodDelete && r.URL.Path == "/items/7" {
			deletes.Add(1)
			w.WriteHeader(http.StatusNoContent)
			return
		}
		http.NotFound(w, r)
	})
	cfg := filepath.Join(t.TempDir(), "web.toml")
	conf += "[grants.\"web.wasm\"]\nhosts = [\"*\"]\nmethods = [\"GET\", \"DELETE\"]\nallow_networks = [\"127.0.0.0/8\"]\n"
	if err := os.WriteFile(cfg, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	srv := startServerEnv(t, []string{"SSL_CERT_FILE=" + pemFile}, webPlugins(t), "--config", cfg)
	return webDelete{srv: srv, upURL: up.URL, cfg: cfg, pem: pemFile, deletes: deletes}
}
