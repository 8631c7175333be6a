package transport_test

import (
	"context"
	"encoding/json"
	"fmt"
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
	"github.com/toolhost/toolhost/idempotency"
	"github.com/toolhost/toolhost/idempotency/redisstore"
	"github.com/toolhost/toolhost/internal/guestinput"
	"github.com/toolhost/toolhost/internal/redisconn"
	"github.com/toolhost/toolhost/internal/testkit/redistest"
	"github.com/toolhost/toolhost/registry"
	"github.com/toolhost/toolhost/transport"
)

// nagger asks two questions (a and b) at every call, answers or not, and
// says which round it is in from its state: a tool that never settles.
type nagger struct{ calls atomic.Int32 }

func (n *nagger) Handle(ctx context.Context, _ json.RawMessage) (json.RawMessage, error) {
	n.calls.Add(1)
	round := 1
	if doc := guestinput.Resume(ctx); doc != nil {
		var r abi.InputResume
		if err := json.Unmarshal(doc, &r); err != nil {
			return nil, err
		}
		if len(r.Responses) != 2 {
			return nil, fmt.Errorf("resumed with %d answers, want 2", len(r.Responses))
		}
		fmt.Sscan(r.State, &round)
		round++
	}
	form := json.RawMessage(`{"type":"object","properties":{"ok":{"type":"boolean"}}}`)
	return nil, &abi.InputRequest{State: fmt.Sprint(round), Requests: map[string]abi.InputQuestion{
		"a": {Mode: abi.InputForm, Message: fmt.Sprintf("a, round %d?", round), Schema: form},
		"b": {Mode: abi.InputForm, Message: fmt.Sprintf("b, round %d?", round), Schema: form},
	}}
}

// taskLog passes on "ask " or "end " and the task id of each task that
// was parked in input_required or ended (the server's debug lines), so
// that a test waits for them rather than polling.
type taskLog chan string

func (l taskLog) Write(p []byte) (int, error) {
	var rec map[string]any
	if json.Unmarshal(p, &rec) != nil {
		return len(p), nil
	}
	id, _ := rec["task_id"].(string)
	switch rec["msg"] {
	case "task asks for input":
		l <- "ask " + id
	case "task ended":
		l <- "end " + id
	}
	return len(p), nil
}

type inputReplica struct {
	url   string
	asks  taskLog
	asker *asker
	nag   *nagger
}

// taskInputReplicas serves files.remove (an asker) and files.nag over
// HTTP behind alice's and bob's tokens: one replica on the in-memory
// store, or n sharing one real Redis.
func taskInputReplicas(t *testing.T, store string, n int) []inputReplica {
	t.Helper()
	var srv *redistest.Server
	if store == "redis" {
		srv = redistest.Start(t)
	}
	tokens, err := transport.ParseTokens("test", strings.NewReader("alice:"+aliceToken+"\nbob:"+bobToken+"\n"))
	if err != nil {
		t.Fatal(err)
	}
	schema := json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}}}`)
	out := make([]inputReplica, n)
	for i := range out {
		r := inputReplica{asks: make(taskLog, 16), asker: &asker{}, nag: &nagger{}}
		reg, err := registry.New([]*registry.Tool{
			{Name: "files.remove", InputSchema: schema, Timeout: time.Second, Handler: r.asker},
			{Name: "files.nag", InputSchema: schema, Timeout: time.Second, Handler: r.nag},
		})
		if err != nil {
			t.Fatal(err)
		}
		cfg := dispatcher.Config{}
		if srv != nil {
			c, err := redisconn.Open(redisconn.Options{URL: srv.URL()})
			if err != nil {
				t.Fatal(err)
			}
			st := redisstore.New(redisstore.Options{Conn: c, Poll: 20 * time.Millisecond, Errors: dispatcher.OutcomeErrors})
			t.Cleanup(func() { st.Close(); c.Close() })
			cfg.Idempotency = idempotency.Store(st)
		}
		s := transport.New(dispatcher.New(reg, cfg), reg, transport.Options{Version: "test",
			Logger: slog.New(slog.NewJSONHandler(r.asks, &slog.HandlerOptions{Level: slog.LevelDebug})),
			Tasks:  transport.TaskOptions{PollInterval: 10 * time.Millisecond}})
		hs := httptest.NewServer(tokens.Require(s.HTTPHandler()))
		t.Cleanup(hs.Close)
		r.url = hs.URL + "/mcp"
		out[i] = r
	}
	return out
}

// inputTaskReply is a tasks/* answer with what input_required adds.
type inputTaskReply struct {
	taskReply
	InputRequests mcp.InputRequestMap `json:"inputRequests"`
	Content       json.RawMessage     `json:"content"`
}

type taskUpdateParams struct {
	mcp.ParamsBase
	TaskID         string               `json:"taskId"`
	InputResponses mcp.InputResponseMap `json:"inputResponses"`
}

// taskInputClient is an official Go SDK client over HTTP as token's
// caller at version, that can also send the tasks/* methods (the SDK has
// no Tasks of its own). At 2026-07-28 it declares the Tasks extension.
func taskInputClient(t *testing.T, url, token, version string, opts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	if opts == nil {
		opts = &mcp.ClientOptions{}
	}
	if version == transport.Revision20260728 {
		opts.Capabilities = &mcp.ClientCapabilities{}
		if opts.ElicitationHandler != nil {
			opts.Capabilities.Elicitation = &mcp.ElicitationCapabilities{Form: &mcp.FormElicitationCapabilities{}}
		}
		opts.Capabilities.AddExtension(transport.ExtTasks, nil)
	}
	c := mcp.NewClient(&mcp.Implementation{Name: "task-input", Version: "0"}, opts)
	for _, m := range []string{"tasks/get", "tasks/result", "tasks/cancel"} {
		if err := mcp.AddSendingCustomMethod[*taskIDParams, *inputTaskReply](c, m); err != nil {
			t.Fatal(err)
		}
	}
	if err := mcp.AddSendingCustomMethod[*taskUpdateParams, *taskReply](c, "tasks/update"); err != nil {
		t.Fatal(err)
	}
	cs, err := c.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: url,
		HTTPClient: &http.Client{Transport: bearer{token}}, DisableStandaloneSSE: true},
		&mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

func getTask(t *testing.T, cs *mcp.ClientSession, method, id string) *inputTaskReply {
	t.Helper()
	r, err := mcp.CallCustomMethod[*taskIDParams, *inputTaskReply](t.Context(), cs, method, &taskIDParams{TaskID: id})
	if err != nil {
		t.Fatalf("%s %s: %v", method, id, err)
	}
	return r
}

func updateTask(t *testing.T, cs *mcp.ClientSession, id string, rs mcp.InputResponseMap) error {
	t.Helper()
	r, err := mcp.CallCustomMethod[*taskUpdateParams, *taskReply](t.Context(), cs, "tasks/update", &taskUpdateParams{TaskID: id, InputResponses: rs})
	if err == nil && r.ResultType != "complete" {
		t.Fatalf("tasks/update answered %+v, want resultType complete", r)
	}
	return err
}

// parkedOn waits for task id to be parked in input_required on r.
func parkedOn(t *testing.T, r inputReplica, id string) { t.Helper(); logged(t, r, "ask "+id) }

// endedOn waits for task id's end to be stored by r.
func endedOn(t *testing.T, r inputReplica, id string) { t.Helper(); logged(t, r, "end "+id) }

func logged(t *testing.T, r inputReplica, want string) {
	t.Helper()
	select {
	case got := <-r.asks:
		if got != want {
			t.Fatalf("the server logged %q, want %q", got, want)
		}
	case <-t.Context().Done():
		t.Fatalf("the server never logged %q", want)
	}
}

// removed reads files.remove's result: the state it got back and the
// user's answer.
func removed(t *testing.T, structured json.RawMessage) (state, action string, content map[string]any) {
	t.Helper()
	var got struct {
		State, Action string
		Content       map[string]any
	}
	if err := json.Unmarshal(structured, &got); err != nil {
		t.Fatalf("result %s: %v", structured, err)
	}
	return got.State, got.Action, got.Content
}

var taskAnswers = map[string]*mcp.ElicitResult{
	"accept":  {Action: "accept", Content: map[string]any{"confirm": true}},
	"decline": {Action: "decline"},
	"cancel":  {Action: "cancel"},
}

// 2025-11-25: a task whose tool asks enters input_required (tasks/get
// says so); tasks/result then asks the client with elicitation/create
// naming the task, resumes the task with the answer, and answers the
// final result; the tool got the answer and its own state. Both stores.
func TestTaskInputRequired20251125(t *testing.T) {
	for _, store := range []string{"memory", "redis"} {
		for action, answer := range taskAnswers {
			t.Run(store+"/"+action, func(t *testing.T) {
				r := taskInputReplicas(t, store, 1)[0]
				var asked atomic.Int32
				var related atomic.Value
				cs := taskInputClient(t, r.url, aliceToken, transport.Revision20251125, &mcp.ClientOptions{
					ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
						asked.Add(1)
						rel, _ := req.Params.Meta[transport.MetaRelatedTask].(map[string]any)
						related.Store(fmt.Sprint(rel["taskId"]))
						if req.Params.Message != "Delete it?" {
							t.Errorf("asked %+v", req.Params)
						}
						return answer, nil
					}})
				id := startTask(t, cs, "files_remove", map[string]any{"path": "/x"}, nil)
				parkedOn(t, r, id)
				if got := getTask(t, cs, "tasks/get", id); got.Status != "input_required" || got.TTL == nil || got.PollInterval == 0 {
					t.Fatalf("tasks/get of a task that asks: %+v, want input_required with its wait as ttl", got)
				}
				res := getTask(t, cs, "tasks/result", id)
				if res.IsError {
					t.Fatalf("tasks/result: %+v", res)
				}
				state, act, content := removed(t, res.Structured)
				if state != "asked-once" || act != action || (action == "accept") != (content["confirm"] == true) {
					t.Errorf("the tool got state %q, action %q, content %v", state, act, content)
				}
				if rel, _ := res.Meta[transport.MetaRelatedTask].(map[string]any); rel["taskId"] != id {
					t.Errorf("tasks/result _meta %v", res.Meta)
				}
				if asked.Load() != 1 || related.Load() != id || r.asker.calls.Load() != 2 {
					t.Errorf("asked %d times (naming task %v), tool ran %d times; want 1 (naming %s) and 2", asked.Load(), related.Load(), r.asker.calls.Load(), id)
				}
				if got := getTask(t, cs, "tasks/get", id); got.Status != "completed" {
					t.Errorf("tasks/get after the end: %+v", got)
				}
			})
		}
	}
}

// 2026-07-28: a task whose tool asks enters input_required, and tasks/get
// shows its inputRequests (the same at every poll) until tasks/update
// answers them; answers to keys never asked are ignored; the task then
// resumes and completes with the result inline. With Redis, the task is
// started on one replica and answered, resumed and read on another.
func TestTaskInputRequired20260728(t *testing.T) {
	for _, store := range []string{"memory", "redis"} {
		for action, answer := range taskAnswers {
			t.Run(store+"/"+action, func(t *testing.T) {
				n := 1
				if store == "redis" {
					n = 2
				}
				rs := taskInputReplicas(t, store, n)
				handler := func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
					t.Error("a 2026-07-28 task sent elicitation/create")
					return &mcp.ElicitResult{Action: "cancel"}, nil
				}
				start := taskInputClient(t, rs[0].url, aliceToken, transport.Revision20260728, &mcp.ClientOptions{ElicitationHandler: handler})
				other := taskInputClient(t, rs[n-1].url, aliceToken, transport.Revision20260728, &mcp.ClientOptions{ElicitationHandler: handler})
				id := startTask(t, start, "files_remove", map[string]any{"path": "/x"}, nil)
				parkedOn(t, rs[0], id)
				var first *inputTaskReply
				for range 2 {
					got := getTask(t, other, "tasks/get", id)
					q, _ := got.InputRequests["confirm@1"].(*mcp.ElicitParams)
					if got.Status != "input_required" || got.ResultType != "complete" || len(got.InputRequests) != 1 || q == nil ||
						q.Message != "Delete it?" || q.Mode != "form" || got.TTLMs == nil {
						t.Fatalf("tasks/get: %+v (%+v), want input_required asking confirm@1", got, q)
					}
					first = got
				}
				if err := updateTask(t, other, id, mcp.InputResponseMap{"nope@1": answer}); err != nil {
					t.Fatalf("tasks/update answering nothing asked: %v", err)
				}
				if got := getTask(t, other, "tasks/get", id); got.Status != "input_required" || r0calls(rs) != 1 {
					t.Fatalf("after answering nothing asked: %+v", got)
				}
				if err := updateTask(t, other, id, mcp.InputResponseMap{"confirm@1": answer}); err != nil {
					t.Fatal(err)
				}
				endedOn(t, rs[n-1], id) // the replica that took the answer ran the rest
				got := getTask(t, other, "tasks/get", id)
				var end struct {
					IsError    bool            `json:"isError"`
					Structured json.RawMessage `json:"structuredContent"`
				}
				if err := json.Unmarshal(got.Result, &end); err != nil || got.Status != "completed" || got.InputRequests != nil {
					t.Fatalf("tasks/get after the answer: %+v (%v)", got, err)
				}
				if state, act, _ := removed(t, end.Structured); end.IsError || state != "asked-once" || act != action {
					t.Fatalf("final result %s", got.Result)
				}
				if got.CreatedAt != first.CreatedAt {
					t.Errorf("the task was created anew: %s then %s", first.CreatedAt, got.CreatedAt)
				}
				if err := updateTask(t, other, id, mcp.InputResponseMap{"confirm@1": answer}); err != nil || r0calls(rs) != 2 {
					t.Fatalf("a second answer after the end: %v; the tool ran %d times, want 2", err, r0calls(rs))
				}
			})
		}
	}
}

// r0calls counts files.remove's runs over the replicas.
func r0calls(rs []inputReplica) int32 {
	var n int32
	for _, r := range rs {
		n += r.asker.calls.Load()
	}
	return n
}

// A tool that asks again after every answer: each round's keys are new
// (the extension wants them unique over the task's life), a partial
// answer leaves the task in input_required showing what is left, and the
// fifth ask ends the task with the error that says too many rounds.
func TestTaskInputRounds(t *testing.T) {
	r := taskInputReplicas(t, "memory", 1)[0]
	cs := taskInputClient(t, r.url, aliceToken, transport.Revision20260728, &mcp.ClientOptions{
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) { return nil, nil }})
	id := startTask(t, cs, "files_nag", map[string]any{}, nil)
	yes := &mcp.ElicitResult{Action: "accept", Content: map[string]any{"ok": true}}
	for round := 1; round <= 4; round++ {
		parkedOn(t, r, id)
		a, b := fmt.Sprintf("a@%d", round), fmt.Sprintf("b@%d", round)
		got := getTask(t, cs, "tasks/get", id)
		if got.Status != "input_required" || len(got.InputRequests) != 2 || got.InputRequests[a] == nil || got.InputRequests[b] == nil {
			t.Fatalf("round %d: %+v", round, got)
		}
		if q := got.InputRequests[a].(*mcp.ElicitParams); q.Message != fmt.Sprintf("a, round %d?", round) {
			t.Fatalf("round %d asks %q", round, q.Message)
		}
		if err := updateTask(t, cs, id, mcp.InputResponseMap{a: yes}); err != nil {
			t.Fatal(err)
		}
		if got := getTask(t, cs, "tasks/get", id); got.Status != "input_required" || len(got.InputRequests) != 1 || got.InputRequests[b] == nil {
			t.Fatalf("round %d after a partial answer: %+v, want only %s outstanding", round, got, b)
		}
		if err := updateTask(t, cs, id, mcp.InputResponseMap{b: yes, a: yes}); err != nil {
			t.Fatal(err)
		}
	}
	endedOn(t, r, id)
	end := getTask(t, cs, "tasks/get", id)
	if end.Status != "completed" || !strings.Contains(string(end.Result), `"isError":true`) || !strings.Contains(string(end.Result), "asked for input 5 times") {
		t.Fatalf("after five asks: %+v", end)
	}
	if n := r.nag.calls.Load(); n != 5 {
		t.Errorf("the tool ran %d times, want 5", n)
	}
}

// An idempotency key covers a task's whole exchange: a second task with
// the key joins the first (same id) and replays its final result, and a
// plain tools/call with the key replays it too; the user was asked once
// and the tool ran twice (the ask, the answered run).
func TestTaskInputUnderKey(t *testing.T) {
	r := taskInputReplicas(t, "memory", 1)[0]
	var asked atomic.Int32
	cs := taskInputClient(t, r.url, aliceToken, transport.Revision20251125, &mcp.ClientOptions{
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			asked.Add(1)
			return taskAnswers["accept"], nil
		}})
	key := func() mcp.Meta { return mcp.Meta{"toolhost/idempotency_key": "rm-x"} }
	args := map[string]any{"path": "/x"}
	id := startTask(t, cs, "files_remove", args, key())
	parkedOn(t, r, id)
	if again := startTask(t, cs, "files_remove", args, key()); again != id {
		t.Fatalf("a second task with the key while the first asks: %s, want %s", again, id)
	}
	first := getTask(t, cs, "tasks/result", id)
	if again := startTask(t, cs, "files_remove", args, key()); again != id {
		t.Fatalf("a task with the key after the end: %s, want %s", again, id)
	}
	replay := getTask(t, cs, "tasks/result", id)
	plain, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "files_remove", Arguments: args, Meta: key()})
	if err != nil || plain.IsError {
		t.Fatalf("a plain call with the key: %v %+v", err, plain)
	}
	b, _ := json.Marshal(plain.StructuredContent)
	if string(first.Structured) != string(replay.Structured) || string(b) != string(first.Structured) || !strings.Contains(string(b), `"action":"accept"`) {
		t.Errorf("results %s, %s, %s", first.Structured, replay.Structured, b)
	}
	if asked.Load() != 1 || r.asker.calls.Load() != 2 {
		t.Errorf("asked %d times, tool ran %d times; want 1 and 2", asked.Load(), r.asker.calls.Load())
	}
}

// A task whose client declared no elicitation completes with the isError
// result that says it cannot be asked (the tool ran once); one cancelled
// while it waits stays cancelled, and a late answer runs nothing; another
// caller's answer finds no task.
func TestTaskInputRefused(t *testing.T) {
	r := taskInputReplicas(t, "memory", 1)[0]
	plain := taskInputClient(t, r.url, aliceToken, transport.Revision20251125, nil)
	id := startTask(t, plain, "files_remove", map[string]any{"path": "/x"}, nil)
	res := getTask(t, plain, "tasks/result", id)
	if !res.IsError || !strings.Contains(string(res.Content), "no elicitation capability") || r.asker.calls.Load() != 1 {
		t.Fatalf("a client that cannot be asked: %+v after %d runs", res, r.asker.calls.Load())
	}
	endedOn(t, r, id)

	handler := &mcp.ClientOptions{ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		return taskAnswers["accept"], nil
	}}
	alice := taskInputClient(t, r.url, aliceToken, transport.Revision20260728, handler)
	bob := taskInputClient(t, r.url, bobToken, transport.Revision20260728, handler)
	id = startTask(t, alice, "files_remove", map[string]any{"path": "/y"}, nil)
	parkedOn(t, r, id)
	err := updateTask(t, bob, id, mcp.InputResponseMap{"confirm@1": taskAnswers["accept"]})
	wantRPCError(t, err, -32602, "bob answering alice's task")
	bad := &mcp.ElicitResult{Action: "accept", Content: map[string]any{"confirm": map[string]any{"x": 1}}}
	err = updateTask(t, alice, id, mcp.InputResponseMap{"confirm@1": bad})
	wantRPCError(t, err, -32602, "an answer a form cannot hold")
	if got := getTask(t, alice, "tasks/get", id); got.Status != "input_required" || r.asker.calls.Load() != 2 {
		t.Fatalf("after refused answers: %+v, %d runs", got, r.asker.calls.Load())
	}
	if got := getTask(t, alice, "tasks/cancel", id); got.ResultType != "complete" {
		t.Fatalf("tasks/cancel: %+v", got)
	}
	if err := updateTask(t, alice, id, mcp.InputResponseMap{"confirm@1": taskAnswers["accept"]}); err != nil {
		t.Fatal(err)
	}
	if got := getTask(t, alice, "tasks/get", id); got.Status != "cancelled" || got.InputRequests != nil || r.asker.calls.Load() != 2 {
		t.Fatalf("a cancelled task answered: %+v, %d runs", got, r.asker.calls.Load())
	}
}

// 2025-11-25, a client that only polls tasks/get (as the TypeScript
// SDK's ext-tasks does): the questions are pushed on its session's GET
// stream when the task parks, naming the task, and its answer resumes
// the task without any tasks/result.
func TestTaskInputPushed(t *testing.T) {
	r := taskInputReplicas(t, "memory", 1)[0]
	var related atomic.Value
	c := mcp.NewClient(&mcp.Implementation{Name: "task-input-push", Version: "0"}, &mcp.ClientOptions{
		ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			rel, _ := req.Params.Meta[transport.MetaRelatedTask].(map[string]any)
			related.Store(fmt.Sprint(rel["taskId"]))
			return taskAnswers["accept"], nil
		}})
	for _, m := range []string{"tasks/get", "tasks/result", "tasks/cancel"} {
		if err := mcp.AddSendingCustomMethod[*taskIDParams, *inputTaskReply](c, m); err != nil {
			t.Fatal(err)
		}
	}
	cs, err := c.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: r.url, HTTPClient: &http.Client{Transport: bearer{aliceToken}}},
		&mcp.ClientSessionOptions{ProtocolVersion: transport.Revision20251125})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	id := startTask(t, cs, "files_remove", map[string]any{"path": "/x"}, nil)
	parkedOn(t, r, id)
	endedOn(t, r, id)
	got := getTask(t, cs, "tasks/get", id)
	if got.Status != "completed" || related.Load() != id || r.asker.calls.Load() != 2 {
		t.Fatalf("tasks/get %+v; asked naming %v, tool ran %d times", got, related.Load(), r.asker.calls.Load())
	}
}

// tasks/cancel of a task whose question was pushed withdraws the
// question: the client's dialog is cancelled (notifications/cancelled
// ends its handler), and the task stays cancelled.
func TestTaskInputPushWithdrawn(t *testing.T) {
	r := taskInputReplicas(t, "memory", 1)[0]
	asked, withdrawn := make(chan struct{}), make(chan struct{})
	c := mcp.NewClient(&mcp.Implementation{Name: "task-input-withdrawn", Version: "0"}, &mcp.ClientOptions{
		ElicitationHandler: func(ctx context.Context, _ *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			close(asked)
			<-ctx.Done()
			close(withdrawn)
			return nil, ctx.Err()
		}})
	for _, m := range []string{"tasks/get", "tasks/result", "tasks/cancel"} {
		if err := mcp.AddSendingCustomMethod[*taskIDParams, *inputTaskReply](c, m); err != nil {
			t.Fatal(err)
		}
	}
	cs, err := c.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: r.url, HTTPClient: &http.Client{Transport: bearer{aliceToken}}},
		&mcp.ClientSessionOptions{ProtocolVersion: transport.Revision20251125})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	id := startTask(t, cs, "files_remove", map[string]any{"path": "/x"}, nil)
	<-asked
	if got := getTask(t, cs, "tasks/cancel", id); got.Status != "cancelled" {
		t.Fatalf("tasks/cancel: %+v", got)
	}
	select {
	case <-withdrawn:
	case <-t.Context().Done():
		t.Fatal("the pushed question was never withdrawn")
	}
	if got := getTask(t, cs, "tasks/get", id); got.Status != "cancelled" || r.asker.calls.Load() != 1 {
		t.Fatalf("after the cancel: %+v, the tool ran %d times", got, r.asker.calls.Load())
	}
}
