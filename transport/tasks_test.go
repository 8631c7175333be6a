package transport_test

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolhost/toolhost/transport"
)

// taskIDParams are the params of tasks/get, tasks/result and tasks/cancel.
type taskIDParams struct {
	mcp.ParamsBase
	TaskID string `json:"taskId"`
}

// taskReply reads any tasks/* answer: a task of either revision, or a
// CallToolResult (tasks/result).
type taskReply struct {
	mcp.ResultBase
	ResultType    string          `json:"resultType"`
	TaskID        string          `json:"taskId"`
	Status        string          `json:"status"`
	StatusMessage string          `json:"statusMessage"`
	CreatedAt     string          `json:"createdAt"`
	TTL           *int64          `json:"ttl"`
	TTLMs         *int64          `json:"ttlMs"`
	PollInterval  int64           `json:"pollInterval"`
	Result        json.RawMessage `json:"result"`
	IsError       bool            `json:"isError"`
	Structured    json.RawMessage `json:"structuredContent"`
}

// taskClient connects a client that can send the tasks/* methods to h's
// server at version, with the client options opts (nil: none).
func (h *harness) taskClient(t *testing.T, version string, opts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	ct, st := mcp.NewInMemoryTransports()
	ss, err := h.srv.Connect(t.Context(), st)
	if err != nil {
		t.Fatal(err)
	}
	c := mcp.NewClient(&mcp.Implementation{Name: "task-test", Version: "v0"}, opts)
	for _, m := range []string{"tasks/get", "tasks/result", "tasks/cancel"} {
		if err := mcp.AddSendingCustomMethod[*taskIDParams, *taskReply](c, m); err != nil {
			t.Fatal(err)
		}
	}
	cs, err := c.Connect(t.Context(), ct, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cs.Close()
		ss.Wait()
	})
	return cs
}

func tasksCall(t *testing.T, cs *mcp.ClientSession, method, id string) (*taskReply, error) {
	t.Helper()
	return mcp.CallCustomMethod[*taskIDParams, *taskReply](t.Context(), cs, method, &taskIDParams{TaskID: id})
}

func mustTask(t *testing.T, cs *mcp.ClientSession, method, id string) *taskReply {
	t.Helper()
	r, err := tasksCall(t, cs, method, id)
	if err != nil {
		t.Fatalf("%s %s: %v", method, id, err)
	}
	return r
}

// startTask calls tool as a task (_meta toolhost/task, where a 2025
// client's params.task travels) and returns the task id the answer names.
func startTask(t *testing.T, cs *mcp.ClientSession, tool string, args any, meta mcp.Meta) string {
	t.Helper()
	if meta == nil {
		meta = mcp.Meta{}
	}
	meta[transport.MetaTask] = map[string]any{}
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: tool, Arguments: args, Meta: meta})
	if err != nil {
		t.Fatalf("tools/call %s as a task: %v", tool, err)
	}
	if res.IsError {
		t.Fatalf("tools/call %s as a task was refused: %+v", tool, res)
	}
	rel, _ := res.Meta[transport.MetaRelatedTask].(map[string]any)
	id, _ := rel["taskId"].(string)
	if !strings.HasPrefix(id, "task-") {
		t.Fatalf("the answer names no task: _meta %v", res.Meta)
	}
	return id
}

func wantRPCError(t *testing.T, err error, code int64, what string) {
	t.Helper()
	var je *jsonrpc.Error
	if !errors.As(err, &je) || je.Code != code {
		t.Fatalf("%s: %v, want JSON-RPC error %d", what, err, code)
	}
}

// Start, poll, result after completion (2025-11-25): the task works while
// the tool runs, tasks/result waits for its end and answers the
// CallToolResult naming the task, and tasks/get then says completed with
// the TTL the result is kept for.
func TestTaskStartPollResult(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := start(t)
		cs := h.taskClient(t, transport.Revision20251125, nil)
		id := startTask(t, cs, "block.wait", map[string]any{}, nil)
		<-h.entered
		got := mustTask(t, cs, "tasks/get", id)
		if got.TaskID != id || got.Status != "working" || got.TTL != nil || got.PollInterval != 1000 || got.CreatedAt == "" {
			t.Fatalf("while running: %+v", got)
		}
		done := make(chan *taskReply)
		go func() { done <- mustTask(t, cs, "tasks/result", id) }()
		synctest.Wait()
		select {
		case r := <-done:
			t.Fatalf("tasks/result answered before the task ended: %+v", r)
		default:
		}
		h.release <- struct{}{}
		res := <-done
		if res.IsError || string(res.Structured) != `{"released":true}` {
			t.Fatalf("tasks/result: %+v", res)
		}
		if rel, _ := res.Meta[transport.MetaRelatedTask].(map[string]any); rel["taskId"] != id {
			t.Fatalf("tasks/result _meta %v does not name the task", res.Meta)
		}
		got = mustTask(t, cs, "tasks/get", id)
		if got.Status != "completed" || got.TTL == nil || *got.TTL != 60000 || got.PollInterval != 0 {
			t.Fatalf("after the end: %+v, want completed, kept 60 s", got)
		}
	})
}

// A tool failure is a failed task at 2025-11-25, whose tasks/result is
// the isError result with the envelope, as tools/call would have been.
func TestTaskToolFailure2025(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := start(t)
		cs := h.taskClient(t, transport.Revision20251125, nil)
		id := startTask(t, cs, "fail.schema", map[string]any{}, nil)
		res := mustTask(t, cs, "tasks/result", id)
		if !res.IsError || !strings.Contains(string(mustJSON(t, res.Meta[transport.MetaError])), `"kind":"schema"`) {
			t.Fatalf("tasks/result: %+v", res)
		}
		if got := mustTask(t, cs, "tasks/get", id); got.Status != "failed" || !strings.Contains(got.StatusMessage, "schema") {
			t.Fatalf("tasks/get: %+v, want failed naming the kind", got)
		}
	})
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// tasks/cancel stops the guest at once (the audit line says cancelled),
// the task is cancelled and stays so, it has no result, and a second
// cancel of the ended task is refused (2025-11-25).
func TestTaskCancel(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		lines := make(logLines, 16)
		h := start(t, transport.Options{Logger: slog.New(slog.NewJSONHandler(lines, nil))})
		cs := h.taskClient(t, transport.Revision20251125, nil)
		id := startTask(t, cs, "block.ctx", map[string]any{}, nil)
		synctest.Wait() // the call is in the tool, waiting for its context
		if run := h.srv.RunningTasks(); len(run) != 1 || run[0].ID != id || run[0].Tool != "block.ctx" || run[0].Started.IsZero() {
			t.Fatalf("RunningTasks = %+v, want task %s of block.ctx", run, id)
		}
		got := mustTask(t, cs, "tasks/cancel", id)
		if got.Status != "cancelled" {
			t.Fatalf("tasks/cancel answered %+v, want cancelled", got)
		}
		if rec := lines.next(t, "call"); rec["outcome"] != "cancelled" || rec["tool"] != "block.ctx" {
			t.Fatalf("audit line %v, want outcome cancelled", rec)
		}
		synctest.Wait()
		if got := mustTask(t, cs, "tasks/get", id); got.Status != "cancelled" {
			t.Fatalf("after the run ended: %+v, want still cancelled", got)
		}
		if run := h.srv.RunningTasks(); len(run) != 0 {
			t.Fatalf("RunningTasks after the end = %+v, want none", run)
		}
		_, err := tasksCall(t, cs, "tasks/result", id)
		wantRPCError(t, err, jsonrpc.CodeInvalidParams, "tasks/result of a cancelled task")
		_, err = tasksCall(t, cs, "tasks/cancel", id)
		wantRPCError(t, err, jsonrpc.CodeInvalidParams, "cancelling an ended task")
	})
}

// A task's result is kept for the idempotency replay TTL after its end,
// then the task is gone.
func TestTaskExpiry(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := start(t)
		cs := h.taskClient(t, transport.Revision20251125, nil)
		id := startTask(t, cs, "text.count", map[string]any{"text": "a b"}, nil)
		mustTask(t, cs, "tasks/result", id)
		time.Sleep(time.Minute - time.Millisecond)
		if got := mustTask(t, cs, "tasks/get", id); got.Status != "completed" {
			t.Fatalf("just before the TTL: %+v", got)
		}
		time.Sleep(time.Millisecond)
		_, err := tasksCall(t, cs, "tasks/get", id)
		wantRPCError(t, err, jsonrpc.CodeInvalidParams, "tasks/get after the TTL")
	})
}

// The run is apart from the request: a client that started a task and
// went away gets its result from a new connection.
func TestTaskResultAfterDisconnect(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := start(t)
		first := h.taskClient(t, transport.Revision20251125, nil)
		id := startTask(t, first, "block.wait", map[string]any{}, nil)
		<-h.entered
		first.Close()
		h.release <- struct{}{}
		later := h.taskClient(t, transport.Revision20251125, nil)
		if res := mustTask(t, later, "tasks/result", id); res.IsError || string(res.Structured) != `{"released":true}` {
			t.Fatalf("tasks/result from a new connection: %+v", res)
		}
	})
}

// A task started with an idempotency key is the keyed execution: a second
// task with the key gets the same task, a plain tools/call with the key
// joins it, the tool runs once; the key with other arguments is refused.
func TestTaskKeyedJoin(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := start(t)
		cs := h.taskClient(t, transport.Revision20251125, nil)
		key := mcp.Meta{transport.MetaIdempotencyKey: "job-7"}
		id := startTask(t, cs, "block.wait", map[string]any{"n": 1}, key)
		<-h.entered
		if again := startTask(t, cs, "block_wait", map[string]any{"n": 1}, mcp.Meta{transport.MetaIdempotencyKey: "job-7"}); again != id {
			t.Fatalf("second task with the key is %s, want %s", again, id)
		}
		plain := make(chan *mcp.CallToolResult)
		go func() {
			plain <- h.call(t, "block.wait", map[string]any{"n": 1}, mcp.Meta{transport.MetaIdempotencyKey: "job-7"})
		}()
		synctest.Wait()
		h.release <- struct{}{}
		if res := <-plain; res.IsError {
			t.Fatalf("the plain call that joined: %+v", res)
		}
		if res := mustTask(t, cs, "tasks/result", id); res.IsError {
			t.Fatalf("tasks/result: %+v", res)
		}
		other := h.call(t, "block.wait", map[string]any{"n": 2}, mcp.Meta{transport.MetaIdempotencyKey: "job-7", transport.MetaTask: map[string]any{}})
		if env := failed(t, other); env.Kind != "schema" {
			t.Fatalf("the key with other arguments: %+v, want schema", env)
		}
	})
}

// toolhost.plan runs as a task like any tool.
func TestTaskPlan(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := start(t, transport.Options{Plans: &transport.PlanOptions{}, Logger: slog.New(slog.DiscardHandler)})
		related := make(chan any, 64)
		cs := h.taskClient(t, transport.Revision20251125, &mcp.ClientOptions{
			ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
				related <- req.Params.Meta[transport.MetaRelatedTask]
			}})
		plan := map[string]any{"goal": "count", "steps": []any{
			map[string]any{"id": 1, "tool_name": "text.count", "args": map[string]any{"text": "one two three"}}}}
		id := startTask(t, cs, transport.PlanWireName, plan, mcp.Meta{"progressToken": "plan-1"})
		res := mustTask(t, cs, "tasks/result", id)
		synctest.Wait()
		if len(related) == 0 {
			t.Fatal("no progress notification from the plan task")
		}
		for len(related) > 0 {
			if r, _ := (<-related).(map[string]any); r["taskId"] != id {
				t.Fatalf("a progress notification of the task names %v, want task %s", r, id)
			}
		}
		var session struct {
			Status  string `json:"status"`
			History []struct {
				Result json.RawMessage `json:"result"`
			} `json:"history"`
		}
		if err := json.Unmarshal(res.Structured, &session); err != nil || res.IsError || session.Status != "completed" || len(session.History) != 1 {
			t.Fatalf("plan task result: %+v (%v)", res, err)
		}
		if !strings.Contains(string(session.History[0].Result), `"words":3`) {
			t.Fatalf("the step's result: %s", session.History[0].Result)
		}
	})
}

// 2026-07-28: a client that declares the extension gets a task for an
// offered tool (timeout over OfferAfter) without asking, and for any
// tool when it asks; tasks/get carries the result inline, a tool failure
// is a completed task there; a client that does not declare the
// extension is answered at once, and its tasks/get is -32021.
func TestTasks20260728(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := start(t)
		caps := &mcp.ClientCapabilities{}
		caps.AddExtension(transport.ExtTasks, nil)
		cs := h.taskClient(t, transport.Revision20260728, &mcp.ClientOptions{Capabilities: caps})
		res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "block.wait", Arguments: map[string]any{}})
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := res.Meta[transport.MetaRelatedTask].(map[string]any)
		id, _ := rel["taskId"].(string)
		if id == "" {
			t.Fatalf("an offered tool (timeout 1h) was not made a task: %+v", res)
		}
		<-h.entered
		if got := mustTask(t, cs, "tasks/get", id); got.Status != "working" || got.ResultType != "complete" || got.TTLMs != nil {
			t.Fatalf("tasks/get while running: %+v", got)
		}
		h.release <- struct{}{}
		synctest.Wait()
		got := mustTask(t, cs, "tasks/get", id)
		if got.Status != "completed" || !strings.Contains(string(got.Result), `"released":true`) || got.TTLMs == nil {
			t.Fatalf("tasks/get after the end: %+v", got)
		}
		// A short tool runs at once unless the client asks.
		if res := h.callOn(t, cs, "fail.internal", nil); !res.IsError {
			t.Fatalf("fail.internal (3 s) was not run at once: %+v", res)
		}
		fid := startTask(t, cs, "fail.internal", map[string]any{}, nil)
		synctest.Wait()
		if got := mustTask(t, cs, "tasks/get", fid); got.Status != "completed" || !strings.Contains(string(got.Result), `"isError":true`) {
			t.Fatalf("a failed tool at 2026-07-28: %+v, want completed with the isError result", got)
		}
		if _, err := tasksCall(t, cs, "tasks/cancel", fid); err != nil {
			t.Fatalf("tasks/cancel of an ended task at 2026-07-28 is acknowledged: %v", err)
		}
		plain := h.taskClient(t, transport.Revision20260728, nil)
		go func() { <-h.entered; h.release <- struct{}{} }()
		if res := h.callOn(t, plain, "block.wait", nil); res.IsError || res.Meta[transport.MetaRelatedTask] != nil {
			t.Fatalf("a client without the extension got %+v, want the result", res)
		}
		_, err = tasksCall(t, plain, "tasks/get", id)
		wantRPCError(t, err, -32021, "tasks/get without the extension")
	})
}

func (h *harness) callOn(t *testing.T, cs *mcp.ClientSession, tool string, meta mcp.Meta) *mcp.CallToolResult {
	t.Helper()
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: tool, Arguments: map[string]any{}, Meta: meta})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// Over stdio, a 2025-11-25 tools/call with params.task (which the SDK's
// params type has no field for) becomes a task, and tasks/result answers
// its result; without params.task the call is answered at once.
func TestTaskParamOverStdio(t *testing.T) {
	p := servePipes(t, 0)
	p.send(t, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"text_count","arguments":{"text":"a b"},"task":{"ttl":1000},"_meta":{"progressToken":"p"}}}`)
	var created struct {
		Task struct {
			TaskID string `json:"taskId"`
			Status string `json:"status"`
		} `json:"task"`
	}
	if a := p.recv(t); a.Error != nil || json.Unmarshal(a.Result, &created) != nil || created.Task.TaskID == "" {
		t.Fatalf("tools/call with params.task: %s %+v, want a CreateTaskResult", a.Result, a.Error)
	}
	p.send(t, `{"jsonrpc":"2.0","id":2,"method":"tasks/result","params":{"taskId":"`+created.Task.TaskID+`"}}`)
	if a := p.recv(t); a.Error != nil || !strings.Contains(string(a.Result), `\"words\":2`) {
		t.Fatalf("tasks/result: %s %+v", a.Result, a.Error)
	}
	p.send(t, `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"text_count","arguments":{"text":"a b"}}}`)
	if a := p.recv(t); a.Error != nil || !strings.Contains(string(a.Result), `"words":2`) {
		t.Fatalf("tools/call without params.task: %s %+v", a.Result, a.Error)
	}
}
