package transport_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"testing"
	"testing/synctest"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolhost/toolhost/abi"
	"github.com/toolhost/toolhost/dispatcher"
	"github.com/toolhost/toolhost/internal/guestnote"
	"github.com/toolhost/toolhost/registry"
	"github.com/toolhost/toolhost/transport"
)

// notesServer serves notes.report, a handler that reports as the host
// does for a guest: two progress notes, one that does not increase (a
// retry's restart), and a log message, through the Sink in its context.
func notesServer(t *testing.T, plans ...*transport.PlanOptions) *harness {
	t.Helper()
	report := registry.HandlerFunc(func(ctx context.Context, _ json.RawMessage) (json.RawMessage, error) {
		if s := guestnote.SinkFrom(ctx); s != nil {
			s.Progress(1, 3, "one")
			s.Progress(1, 3, "one again")
			s.Progress(2, 0, "two")
			s.Log(abi.LogNotice, "hello")
		}
		return json.RawMessage(`{}`), nil
	})
	reg, err := registry.New([]*registry.Tool{{Name: "notes.report", InputSchema: json.RawMessage(`{"type":"object"}`),
		Timeout: time.Second, Handler: report}})
	if err != nil {
		t.Fatal(err)
	}
	o := transport.Options{Version: "test", Logger: slog.New(slog.DiscardHandler)}
	if len(plans) > 0 {
		o.Plans = plans[0]
	}
	return &harness{srv: transport.New(dispatcher.New(reg, dispatcher.Config{}), reg, o)}
}

// A guest's notes reach an MCP client of either revision on its request:
// progress when the request carried a progress token (growing, the total
// omitted when unknown), log messages when the client set a level
// (logging/setLevel at 2025-11-25, the request's _meta at 2026-07-28).
func TestGuestNotesReachTheClient(t *testing.T) {
	for _, version := range []string{transport.Revision20251125, transport.Revision20260728} {
		t.Run(version, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h := notesServer(t)
				progress := make(chan *mcp.ProgressNotificationParams, 8)
				logs := make(chan *mcp.LoggingMessageParams, 8)
				cs := h.clientAt(t, version, &mcp.ClientOptions{
					ProgressNotificationHandler: func(_ context.Context, r *mcp.ProgressNotificationClientRequest) { progress <- r.Params },
					LoggingMessageHandler:       func(_ context.Context, r *mcp.LoggingMessageRequest) { logs <- r.Params },
				})
				call := func(token any, level string) {
					t.Helper()
					p := &mcp.CallToolParams{Name: "notes.report", Arguments: map[string]any{}}
					if level != "" && version == transport.Revision20260728 {
						p.Meta = mcp.Meta{mcp.MetaKeyLogLevel: level}
					}
					if token != nil {
						p.SetProgressToken(token)
					}
					if res, err := cs.CallTool(t.Context(), p); err != nil || res.IsError {
						t.Fatalf("call: %v %+v", err, res)
					}
					synctest.Wait()
				}
				// Neither a token nor a level: nothing.
				call(nil, "")
				if len(progress)+len(logs) != 0 {
					t.Fatalf("%d progress and %d log notifications without a token or a level", len(progress), len(logs))
				}
				if version == transport.Revision20251125 {
					if err := cs.SetLoggingLevel(t.Context(), &mcp.SetLoggingLevelParams{Level: "info"}); err != nil {
						t.Fatal(err)
					}
				}
				call("tok", "info")
				if len(progress) != 2 {
					t.Fatalf("%d progress notifications, want 2 (the repeat dropped)", len(progress))
				}
				one, two := <-progress, <-progress
				if one.ProgressToken != "tok" || one.Progress != 1 || one.Total != 3 || one.Message != "one" ||
					two.Progress != 2 || two.Total != 0 || two.Message != "two" {
					t.Errorf("progress %+v then %+v", one, two)
				}
				var guest *mcp.LoggingMessageParams
				for len(logs) > 0 {
					if l := <-logs; l.Logger == "notes.report" {
						guest = l
					}
				}
				if guest == nil || guest.Level != "notice" || guest.Data != "hello" || guest.Meta[transport.MetaRequestID] == nil {
					t.Errorf("the guest's log message: %+v", guest)
				}
			})
		})
	}
}

// A keyed execution outlives the request that started it when that caller
// leaves and another waits on: its later notes go to no one. The first
// caller's request is over; a progress for it would reach its client after
// the cancellation, which some clients treat as a protocol error.
func TestGuestNotesAfterTheRequestEnded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		entered, release := make(chan struct{}), make(chan struct{})
		gate := registry.HandlerFunc(func(ctx context.Context, _ json.RawMessage) (json.RawMessage, error) {
			entered <- struct{}{}
			<-release
			if s := guestnote.SinkFrom(ctx); s != nil {
				s.Progress(1, 2, "after the first caller left")
				s.Log(abi.LogError, "after the first caller left")
			}
			return json.RawMessage(`{}`), nil
		})
		reg, err := registry.New([]*registry.Tool{{Name: "notes.gate", InputSchema: json.RawMessage(`{"type":"object"}`),
			Timeout: time.Minute, Handler: gate}})
		if err != nil {
			t.Fatal(err)
		}
		h := &harness{srv: transport.New(dispatcher.New(reg, dispatcher.Config{}), reg,
			transport.Options{Version: "test", Logger: slog.New(slog.DiscardHandler)})}
		heard := make(chan string, 8)
		first := h.clientAt(t, transport.Revision20251125, &mcp.ClientOptions{
			ProgressNotificationHandler: func(_ context.Context, r *mcp.ProgressNotificationClientRequest) { heard <- r.Params.Message },
			LoggingMessageHandler:       func(_ context.Context, r *mcp.LoggingMessageRequest) { heard <- r.Params.Logger },
		})
		if err := first.SetLoggingLevel(t.Context(), &mcp.SetLoggingLevelParams{Level: "debug"}); err != nil {
			t.Fatal(err)
		}
		second := h.clientAt(t, transport.Revision20251125)
		meta := func() mcp.Meta { return mcp.Meta{transport.MetaIdempotencyKey: "k"} }

		ctx1, cancel1 := context.WithCancel(t.Context())
		p1 := &mcp.CallToolParams{Name: "notes.gate", Arguments: map[string]any{}, Meta: meta()}
		p1.SetProgressToken("first")
		done1 := make(chan error, 1)
		go func() { _, err := first.CallTool(ctx1, p1); done1 <- err }()
		<-entered
		done2 := make(chan error, 1)
		go func() {
			_, err := second.CallTool(t.Context(), &mcp.CallToolParams{Name: "notes.gate", Arguments: map[string]any{}, Meta: meta()})
			done2 <- err
		}()
		synctest.Wait() // the second call has joined the execution
		cancel1()
		<-done1
		synctest.Wait() // the server has read the cancellation
		close(release)
		if err := <-done2; err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		if len(heard) > 0 {
			t.Errorf("the first caller, gone, still heard %q", <-heard)
		}
	})
}

// Inside toolhost.plan a step's log messages reach the plan's caller, with
// the step's tool as the logger; its progress does not (the plan's token
// carries the plan's events, and only those).
func TestGuestNotesInAPlan(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := notesServer(t, &transport.PlanOptions{})
		progress := make(chan *mcp.ProgressNotificationParams, 64)
		logs := make(chan *mcp.LoggingMessageParams, 64)
		cs := h.clientAt(t, transport.Revision20260728, &mcp.ClientOptions{
			ProgressNotificationHandler: func(_ context.Context, r *mcp.ProgressNotificationClientRequest) { progress <- r.Params },
			LoggingMessageHandler:       func(_ context.Context, r *mcp.LoggingMessageRequest) { logs <- r.Params },
		})
		p := &mcp.CallToolParams{Name: transport.PlanToolName, Meta: mcp.Meta{mcp.MetaKeyLogLevel: "debug"},
			Arguments: json.RawMessage(`{"goal":"report","steps":[{"id":1,"tool_name":"notes.report","args":{}}]}`)}
		p.SetProgressToken("plan")
		if res, err := cs.CallTool(t.Context(), p); err != nil || res.IsError {
			t.Fatalf("plan: %v %+v", err, res)
		}
		synctest.Wait()
		if len(progress) == 0 {
			t.Fatal("no plan progress")
		}
		for len(progress) > 0 {
			if n := <-progress; n.Meta[transport.MetaPlanEvent] == nil {
				t.Errorf("a progress notification that is not a plan event: %+v", n)
			}
		}
		found := false
		for len(logs) > 0 {
			if l := <-logs; l.Logger == "notes.report" && l.Data == "hello" {
				found = true
			}
		}
		if !found {
			t.Error("the step's log message did not reach the plan's caller")
		}
	})
}
