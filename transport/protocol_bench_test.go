package transport_test

import (
	"log/slog"
	"net/http/httptest"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolhost/toolhost/dispatcher"
	"github.com/toolhost/toolhost/transport"
)

// BenchmarkHTTPCall is one tools/call over real HTTP with the SDK client,
// per revision: what a 2026-07-28 request's own short-lived session costs
// against a call on a 2025 session.
func BenchmarkHTTPCall(b *testing.B) {
	for _, version := range []string{transport.Revision20251125, transport.Revision20260728} {
		b.Run(version, func(b *testing.B) {
			h := &harness{fakes: fakes{entered: make(chan struct{}), release: make(chan struct{})}}
			reg := h.registry(b)
			srv := transport.New(dispatcher.New(reg, dispatcher.Config{}), reg, transport.Options{Version: "bench", Logger: slog.New(slog.DiscardHandler)})
			ts := httptest.NewServer(srv.HTTPHandler())
			defer ts.Close()
			cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "v0"}, nil).Connect(b.Context(),
				&mcp.StreamableClientTransport{Endpoint: ts.URL + "/mcp"}, &mcp.ClientSessionOptions{ProtocolVersion: version})
			if err != nil {
				b.Fatal(err)
			}
			defer cs.Close()
			params := &mcp.CallToolParams{Name: "text.count", Arguments: map[string]any{"text": "one two"}}
			for b.Loop() {
				if res, err := cs.CallTool(b.Context(), params); err != nil || res.IsError {
					b.Fatal(err, res)
				}
			}
		})
	}
}

// BenchmarkHTTPTask is the same call run as a task on a 2025-11-25
// session: tools/call answered with the task, then tasks/result waiting
// for the result (two round trips, the task kept in the in-memory store).
func BenchmarkHTTPTask(b *testing.B) {
	h := &harness{fakes: fakes{entered: make(chan struct{}), release: make(chan struct{})}}
	reg := h.registry(b)
	srv := transport.New(dispatcher.New(reg, dispatcher.Config{}), reg, transport.Options{Version: "bench", Logger: slog.New(slog.DiscardHandler)})
	ts := httptest.NewServer(srv.HTTPHandler())
	defer ts.Close()
	c := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "v0"}, nil)
	if err := mcp.AddSendingCustomMethod[*taskIDParams, *taskReply](c, "tasks/result"); err != nil {
		b.Fatal(err)
	}
	cs, err := c.Connect(b.Context(), &mcp.StreamableClientTransport{Endpoint: ts.URL + "/mcp"},
		&mcp.ClientSessionOptions{ProtocolVersion: transport.Revision20251125})
	if err != nil {
		b.Fatal(err)
	}
	defer cs.Close()
	for b.Loop() {
		params := &mcp.CallToolParams{Name: "text.count", Arguments: map[string]any{"text": "one two"}, Meta: mcp.Meta{transport.MetaTask: map[string]any{}}}
		res, err := cs.CallTool(b.Context(), params)
		if err != nil || res.IsError {
			b.Fatal(err, res)
		}
		id := res.Meta[transport.MetaRelatedTask].(map[string]any)["taskId"].(string)
		out, err := mcp.CallCustomMethod[*taskIDParams, *taskReply](b.Context(), cs, "tasks/result", &taskIDParams{TaskID: id})
		if err != nil || out.IsError {
			b.Fatal(err, out)
		}
	}
}
