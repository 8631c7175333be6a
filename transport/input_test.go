package transport_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolhost/toolhost/abi"
	"github.com/toolhost/toolhost/dispatcher"
	"github.com/toolhost/toolhost/internal/guestinput"
	"github.com/toolhost/toolhost/registry"
	"github.com/toolhost/toolhost/transport"
)

// asker is a tool that behaves as a guest asking for confirmation does:
// a first call answers an input request with its own state; the call that
// brings the answers reports them and the state it got back.
type asker struct{ calls atomic.Int32 }

func (a *asker) Handle(ctx context.Context, _ json.RawMessage) (json.RawMessage, error) {
	a.calls.Add(1)
	doc := guestinput.Resume(ctx)
	if doc == nil {
		return nil, &abi.InputRequest{State: "asked-once", Requests: map[string]abi.InputQuestion{
			"confirm": {Mode: abi.InputForm, Message: "Delete it?",
				Schema: json.RawMessage(`{"type":"object","properties":{"confirm":{"type":"boolean"}},"required":["confirm"]}`)},
		}}
	}
	var r abi.InputResume
	if err := json.Unmarshal(doc, &r); err != nil {
		return nil, err
	}
	return json.Marshal(map[string]any{"state": r.State, "action": r.Responses["confirm"].Action,
		"content": r.Responses["confirm"].Content})
}

// inputServer serves files.remove and files.other (both askers) over
// HTTP behind alice's and bob's tokens.
func inputServer(t *testing.T) (string, *asker) {
	t.Helper()
	a := &asker{}
	schema := json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}}}`)
	reg, err := registry.New([]*registry.Tool{
		{Name: "files.remove", InputSchema: schema, Timeout: time.Second, Handler: a},
		{Name: "files.other", InputSchema: schema, Timeout: time.Second, Handler: a},
	})
	if err != nil {
		t.Fatal(err)
	}
	srv := transport.New(dispatcher.New(reg, dispatcher.Config{}), reg, transport.Options{Version: "test", Logger: slog.New(slog.DiscardHandler),
		Plans: &transport.PlanOptions{}})
	tokens, err := transport.ParseTokens("test", strings.NewReader("alice:"+aliceToken+"\nbob:"+bobToken+"\n"))
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(tokens.Require(srv.HTTPHandler()))
	t.Cleanup(hs.Close)
	return hs.URL + "/mcp", a
}

func inputClient(t *testing.T, url, token, version string, opts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "input-test", Version: "0"}, opts).Connect(t.Context(),
		&mcp.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: bearer{token}}, DisableStandaloneSSE: true},
		&mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	if got := cs.InitializeResult().ProtocolVersion; got != version {
		t.Fatalf("negotiated %s, want %s", got, version)
	}
	return cs
}

// A tool that asks gets the user's answer, whatever it is, and its own
// state back, and completes: through input_required and a retry at
// 2026-07-28, through elicitation/create within the call at 2025-11-25.
func TestInputRequestAnswered(t *testing.T) {
	answers := map[string]*mcp.ElicitResult{
		"accept":  {Action: "accept", Content: map[string]any{"confirm": true}},
		"decline": {Action: "decline"},
		"cancel":  {Action: "cancel"},
	}
	for _, version := range []string{transport.Revision20260728, transport.Revision20251125} {
		for action, answer := range answers {
			t.Run(version+"/"+action, func(t *testing.T) {
				url, a := inputServer(t)
				var asked atomic.Int32
				cs := inputClient(t, url, aliceToken, version, &mcp.ClientOptions{
					ElicitationHandler: func(_ context.Context, r *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
						asked.Add(1)
						if r.Params.Message != "Delete it?" || r.Params.Mode != "form" {
							t.Errorf("asked %+v", r.Params)
						}
						return answer, nil
					}})
				res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "files_remove", Arguments: map[string]any{"path": "/x"}})
				if err != nil || res.IsError || res.NeedsInput() {
					t.Fatalf("call: %v %+v", err, res)
				}
				var got struct {
					State, Action string
					Content       map[string]any
				}
				b, _ := json.Marshal(res.StructuredContent)
				if err := json.Unmarshal(b, &got); err != nil {
					t.Fatal(err)
				}
				if got.State != "asked-once" || got.Action != action || (action == "accept") != (got.Content["confirm"] == true) {
					t.Errorf("the tool got %+v (from %s)", got, b)
				}
				if asked.Load() != 1 || a.calls.Load() != 2 {
					t.Errorf("asked %d times, tool ran %d times; want 1 and 2", asked.Load(), a.calls.Load())
				}
			})
		}
	}
}

// A requestState is good for the caller, tool and arguments it was issued
// for only, and not at all once altered.
func TestInputStateRefusedElsewhere(t *testing.T) {
	url, a := inputServer(t)
	manual := &mcp.ClientOptions{MultiRoundTrip: &mcp.MultiRoundTripOptions{Disabled: true},
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) { return nil, nil }}
	alice := inputClient(t, url, aliceToken, transport.Revision20260728, manual)
	bob := inputClient(t, url, bobToken, transport.Revision20260728, manual)
	args := map[string]any{"path": "/x"}
	first, err := alice.CallTool(t.Context(), &mcp.CallToolParams{Name: "files_remove", Arguments: args})
	if err != nil || !first.NeedsInput() || first.RequestState == "" || first.IsError {
		t.Fatalf("first call: %v %+v", err, first)
	}
	if _, ok := first.InputRequests["confirm"].(*mcp.ElicitParams); !ok {
		t.Fatalf("inputRequests %+v", first.InputRequests)
	}
	yes := mcp.InputResponseMap{"confirm": &mcp.ElicitResult{Action: "accept", Content: map[string]any{"confirm": true}}}
	forged := first.RequestState[:len(first.RequestState)-2] + "AA"
	if forged == first.RequestState {
		forged = first.RequestState[:len(first.RequestState)-2] + "BB"
	}
	for _, tc := range []struct {
		name  string
		cs    *mcp.ClientSession
		tool  string
		args  map[string]any
		state string
		resp  mcp.InputResponseMap
		want  string
	}{
		{"forged", alice, "files_remove", args, forged, yes, "not one this server issued"},
		{"made up", alice, "files_remove", args, "e30.AAAA", yes, "not one this server issued"},
		{"other tool", alice, "files_other", args, first.RequestState, yes, "another tool"},
		{"other caller", bob, "files_remove", args, first.RequestState, yes, "another caller"},
		{"other arguments", alice, "files_remove", map[string]any{"path": "/etc"}, first.RequestState, yes, "other arguments"},
		{"no answer", alice, "files_remove", args, first.RequestState, mcp.InputResponseMap{}, `no answer to input request "confirm"`},
		{"answers without state", alice, "files_remove", args, "", yes, "without requestState"},
		{"nested content", alice, "files_remove", args, first.RequestState,
			mcp.InputResponseMap{"confirm": &mcp.ElicitResult{Action: "accept", Content: map[string]any{"confirm": map[string]any{"x": 1}}}},
			"not a string, number, boolean or list of strings"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := a.calls.Load()
			res, err := tc.cs.CallTool(t.Context(), &mcp.CallToolParams{Name: tc.tool, Arguments: tc.args,
				RequestState: tc.state, InputResponses: tc.resp})
			if err != nil {
				t.Fatal(err)
			}
			e := failed(t, res)
			if e.Kind != "schema" || !strings.Contains(e.Message, tc.want) {
				t.Errorf("envelope %+v; want schema saying %q", e, tc.want)
			}
			if a.calls.Load() != before {
				t.Error("the tool ran on a refused state")
			}
		})
	}
	res, err := alice.CallTool(t.Context(), &mcp.CallToolParams{Name: "files_remove", Arguments: args,
		RequestState: first.RequestState, InputResponses: yes})
	if err != nil || res.IsError || res.NeedsInput() {
		t.Fatalf("the right caller, tool and arguments: %v %+v", err, res)
	}
}

// A client that declared no elicitation capability is told, in an isError
// result, that the tool needs input it cannot give; the tool ran once.
func TestInputRequestClientCannotAnswer(t *testing.T) {
	for _, version := range []string{transport.Revision20260728, transport.Revision20251125} {
		t.Run(version, func(t *testing.T) {
			url, a := inputServer(t)
			cs := inputClient(t, url, aliceToken, version, nil)
			res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "files_remove", Arguments: map[string]any{"path": "/x"}})
			if err != nil {
				t.Fatal(err)
			}
			e := failed(t, res)
			if e.Kind != "schema" || !strings.Contains(e.Message, "needs input from the user") ||
				!strings.Contains(e.Message, "no elicitation capability") || !strings.Contains(e.Message, `"Delete it?"`) {
				t.Errorf("envelope %+v", e)
			}
			if a.calls.Load() != 1 {
				t.Errorf("the tool ran %d times, want 1", a.calls.Load())
			}
		})
	}
}

// A plan step has no user to ask: a tool that asks fails the step with a
// schema error that says so, the tool having run once.
func TestInputRequestInPlanStep(t *testing.T) {
	url, a := inputServer(t)
	cs := inputClient(t, url, aliceToken, transport.Revision20260728, &mcp.ClientOptions{
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			t.Error("a plan step asked the client")
			return &mcp.ElicitResult{Action: "cancel"}, nil
		}})
	_, sr := callPlan(t, cs, `{"goal":"remove","steps":[{"id":1,"tool_name":"files.remove","args":{"path":"/x"},"on_failure":"abort"}]}`)
	if len(sr.History) != 1 || sr.History[0].Error == nil || sr.History[0].Error.Kind != "schema" ||
		!strings.Contains(sr.History[0].Error.Message, "needs input from the user") {
		t.Fatalf("history %+v", sr.History)
	}
	if a.calls.Load() != 1 {
		t.Errorf("the tool ran %d times", a.calls.Load())
	}
}

// An idempotency key covers the whole exchange on the wire: the SDK's
// retry carries the key with the answers, and a later call with the key
// replays the final result without asking again or running the tool.
func TestInputRequestUnderKey(t *testing.T) {
	for _, version := range []string{transport.Revision20260728, transport.Revision20251125} {
		t.Run(version, func(t *testing.T) {
			url, a := inputServer(t)
			var asked atomic.Int32
			cs := inputClient(t, url, aliceToken, version, &mcp.ClientOptions{
				ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
					asked.Add(1)
					return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"confirm": true}}, nil
				}})
			p := &mcp.CallToolParams{Name: "files_remove", Arguments: map[string]any{"path": "/x"},
				Meta: mcp.Meta{"toolhost/idempotency_key": "rm-x"}}
			var results []string
			for range 2 {
				res, err := cs.CallTool(t.Context(), p)
				if err != nil || res.IsError || res.NeedsInput() {
					t.Fatalf("call: %v %+v", err, res)
				}
				b, _ := json.Marshal(res.StructuredContent)
				results = append(results, string(b))
			}
			if results[0] != results[1] || !strings.Contains(results[0], `"action":"accept"`) {
				t.Errorf("results %q", results)
			}
			if asked.Load() != 1 || a.calls.Load() != 2 {
				t.Errorf("asked %d times, tool ran %d times; want 1 and 2 (the replay runs nothing)", asked.Load(), a.calls.Load())
			}
		})
	}
}
