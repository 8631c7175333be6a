package transport

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolhost/toolhost/idempotency"
)

// codeMissingCapability is 2026-07-28's -32021: the request needs a
// client capability it did not declare.
const codeMissingCapability = -32021

// taskParams are the params of tasks/get, tasks/result, tasks/cancel and
// tasks/update.
type taskParams struct {
	mcp.ParamsBase
	TaskID         string          `json:"taskId"`
	InputResponses json.RawMessage `json:"inputResponses,omitempty"`
}

// taskAsker is who sent a tasks/* request, as the middleware saw it.
type taskAsker struct {
	caller    string
	stateless bool
	declared  bool // at 2026-07-28: the request declared ExtTasks
	// session and extra are the request's: a run that answers resume
	// goes on with them (notes, the caller's identity and scopes), and
	// 2025-11-25 tasks/result asks on session.
	session *mcp.ServerSession
	extra   *mcp.RequestExtra
}

type taskAskerKey struct{}

// addTasks serves MCP Tasks when the dispatcher's store keeps them: the
// tasks/* methods, the task answer to tools/call, and the capability in
// initialize (2025-11-25) and server/discover (2026-07-28). It must be the
// outermost middleware: it reshapes the 2025 tools/list that revisionShape
// made.
func (s *Server) addTasks() {
	if s.d.Tasks() == nil {
		return
	}
	for method, h := range map[string]func(context.Context, taskAsker, *taskParams) (mcp.Result, error){
		"tasks/get":    s.taskGet,
		"tasks/result": s.taskResult,
		"tasks/cancel": s.taskCancel,
		"tasks/update": s.taskUpdate,
	} {
		err := mcp.AddReceivingCustomMethod(s.mcp, method, func(ctx context.Context, ss *mcp.ServerSession, p *taskParams) (mcp.Result, error) {
			a, _ := ctx.Value(taskAskerKey{}).(taskAsker)
			a.session = ss
			if p == nil || p.TaskID == "" {
				return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("%s needs params.taskId", method)}
			}
			if a.stateless && !a.declared {
				return nil, missingTasksCapability(method)
			}
			return h(ctx, a, p)
		})
		if err != nil {
			panic("transport: " + err.Error()) // only a standard method name fails, and these are not
		}
	}
	s.mcp.AddReceivingMiddleware(s.tasksMiddleware)
}

func (s *Server) tasksMiddleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if call, ok := req.(*mcp.CallToolRequest); ok && method == "tools/call" && s.wantsTask(call) {
			return s.startTask(ctx, call)
		}
		if p := req.GetParams(); p != nil && len(method) > len("tasks/") && method[:len("tasks/")] == "tasks/" {
			caller, x := "", req.GetExtra()
			if x != nil && x.TokenInfo != nil {
				caller = x.TokenInfo.UserID
			}
			ctx = context.WithValue(ctx, taskAskerKey{}, taskAsker{caller: caller, extra: x,
				stateless: isStateless(sessionVersion(req)), declared: declaresTasks(p.GetMeta())})
		}
		res, err := next(ctx, method, req)
		if err != nil {
			return res, err
		}
		switch r := res.(type) {
		case *mcp.InitializeResult:
			if r.ProtocolVersion >= Revision20251125 {
				return initTasks{r}, nil
			}
		case *mcp.DiscoverResult:
			if r.Capabilities != nil { // a copy of the server's, made for this answer
				r.Capabilities.AddExtension(ExtTasks, nil)
			}
		case legacyToolList:
			return taskToolList{legacyToolList: r, offered: s.offered}, nil
		}
		return res, nil
	}
}

// lookupTask returns the caller's task id. Another caller's task is not
// found, as an unknown one: ids are not for sharing.
func (s *Server) lookupTask(ctx context.Context, a taskAsker, id string) (idempotency.Task, error) {
	t, err := s.d.Tasks().GetTask(ctx, id)
	if err == nil && t.Caller != a.caller {
		err = idempotency.ErrTaskNotFound
	}
	switch {
	case errors.Is(err, idempotency.ErrTaskNotFound):
		return t, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("Failed to retrieve task: task %q not found (it never existed, belongs to another caller, or ended longer ago than results are kept)", id)}
	case err != nil:
		return t, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: fmt.Sprintf("task store: %v", err)}
	}
	return t, nil
}

func (s *Server) taskGet(ctx context.Context, a taskAsker, p *taskParams) (mcp.Result, error) {
	t, err := s.lookupTask(ctx, a, p.TaskID)
	if err != nil {
		return nil, err
	}
	return s.taskAnswer(t, a.stateless, true), nil
}

// taskCancel ends the task as cancelled (the first end wins, so it is
// never reported as a success afterwards) and stops its run: here at
// once, on another replica at its next look at the store.
func (s *Server) taskCancel(ctx context.Context, a taskAsker, p *taskParams) (mcp.Result, error) {
	t, err := s.lookupTask(ctx, a, p.TaskID)
	if err != nil {
		return nil, err
	}
	if t.Status.Terminal() {
		if a.stateless {
			return &taskAck{ResultType: "complete"}, nil
		}
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams,
			Message: fmt.Sprintf("Cannot cancel task: already in terminal status '%s'", legacyStatus(t))}
	}
	t, err = s.d.Tasks().FinishTask(ctx, t.ID, idempotency.TaskEnd{Status: idempotency.TaskCancelled,
		Message: "The task was cancelled by tasks/cancel.", Unalias: true})
	if err != nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: fmt.Sprintf("task store: %v", err)}
	}
	if run := s.taskRuns.get(t.ID); run != nil {
		run.cancel()
	}
	s.stopPush(t.ID) // a question pushed for the task: the client is told it is withdrawn
	if a.stateless {
		return &taskAck{ResultType: "complete"}, nil
	}
	return s.taskAnswer(t, false, false), nil
}

// taskResult (2025-11-25) waits for the task to end and answers what its
// tools/call would have: the CallToolResult, with the task named in
// _meta. A cancelled task has no result. While the task is in
// input_required, it asks the client the task's questions on this request
// (elicitation/create naming the task) and resumes the task with the
// answers.
func (s *Server) taskResult(ctx context.Context, a taskAsker, p *taskParams) (mcp.Result, error) {
	tick := time.NewTicker(s.opts.Tasks.pollInterval())
	defer tick.Stop()
	for {
		t, err := s.lookupTask(ctx, a, p.TaskID)
		if err != nil {
			return nil, err
		}
		if t.Status.Terminal() {
			return finalResult(t)
		}
		if t.Status == idempotency.TaskInputRequired && !a.stateless {
			if s.stopPush(t.ID) {
				continue // the push may have got its answer: look again
			}
			if err := s.elicitTask(ctx, a, t); err != nil {
				return nil, err
			}
			continue
		}
		var done <-chan struct{}
		if run := s.taskRuns.get(t.ID); run != nil {
			done = run.done
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-done:
		case <-tick.C: // it runs on another replica
		}
	}
}

func finalResult(t idempotency.Task) (mcp.Result, error) {
	if t.Status != idempotency.TaskCompleted {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("task %q was %s: it has no result (%s)", t.ID, t.Status, t.Message)}
	}
	var res mcp.CallToolResult
	if err := json.Unmarshal(t.Result, &res); err != nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: fmt.Sprintf("task %q: its stored result is not valid: %v", t.ID, err)}
	}
	if res.Meta == nil {
		res.Meta = mcp.Meta{}
	}
	res.Meta[MetaRelatedTask] = map[string]any{"taskId": t.ID}
	return &res, nil
}

// taskUpdate (2026-07-28) takes the answers to a task's inputRequests
// (answerTask) and acknowledges them; the task resumes once its round is
// answered. Answers to nothing outstanding (a task not waiting, keys
// never asked or answered already) are ignored, as the extension says.
func (s *Server) taskUpdate(ctx context.Context, a taskAsker, p *taskParams) (mcp.Result, error) {
	t, err := s.lookupTask(ctx, a, p.TaskID)
	if err != nil {
		return nil, err
	}
	if t.Status == idempotency.TaskInputRequired && len(p.InputResponses) > 0 {
		var rs mcp.InputResponseMap
		if err := json.Unmarshal(p.InputResponses, &rs); err != nil {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("inputResponses: %v", err)}
		}
		if err := s.answerTask(ctx, a, t, rs); err != nil {
			return nil, err
		}
	}
	return &taskAck{ResultType: "complete"}, nil
}

func missingTasksCapability(method string) error {
	data, _ := json.Marshal(map[string]any{"requiredCapabilities": map[string]any{"extensions": map[string]any{ExtTasks: map[string]any{}}}})
	return &jsonrpc.Error{Code: codeMissingCapability, Data: data,
		Message: fmt.Sprintf("Missing required client capability: %s needs the %s extension in _meta[%q].extensions", method, ExtTasks, mcp.MetaKeyClientCapabilities)}
}
