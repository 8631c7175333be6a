package transport

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolhost/toolhost/dispatcher"
	"github.com/toolhost/toolhost/idempotency"
	"github.com/toolhost/toolhost/internal/guestinput"
	"github.com/toolhost/toolhost/internal/printable"
)

// MCP Tasks (docs/PROTOCOL.md, "Tasks"): a tools/call a client lets run
// as a task is answered at once with a task id; the call runs on, apart
// from the request, and the client polls tasks/get for its state and
// result, or stops it with tasks/cancel. The task id names the
// execution: a task started with an idempotency key is the keyed
// execution, and a second task with the key (same caller, same request)
// gets the same task. Task state lives in the dispatcher's idempotency
// store (memory or Redis), kept for the replay TTL once the task ends.

// Names of the Tasks wire.
const (
	// ExtTasks is the 2026-07-28 extension a client declares in its
	// per-request capabilities to be answered with tasks.
	ExtTasks = "io.modelcontextprotocol/tasks"
	// MetaRelatedTask names a task on a message about it (tasks/result,
	// and toolhost's CreateTaskResult, so SDK clients that decode it as a
	// CallToolResult still find the id).
	MetaRelatedTask = "io.modelcontextprotocol/related-task"
	// MetaTask asks for this tools/call to run as a task (any tool).
	// A 2025-11-25 client's params.task travels here; a 2026-07-28 client
	// that declared ExtTasks may send {} here for a tool the server would
	// not otherwise run as a task.
	MetaTask = "toolhost/task"
)

// Defaults of TaskOptions.
const (
	DefaultTaskOfferAfter   = 60 * time.Second
	DefaultTaskPollInterval = time.Second
)

// TaskOptions configure MCP Tasks (Options.Tasks). The zero value is
// usable: every field documents its default.
type TaskOptions struct {
	// OfferAfter: a tool whose timeout is longer is offered as a task
	// (2025-11-25 tools/list says execution.taskSupport "optional", and a
	// 2026-07-28 client that declared the extension gets a task for it
	// without asking); 0 means DefaultTaskOfferAfter. toolhost.plan is
	// always offered. Any tool runs as a task when the client asks.
	OfferAfter time.Duration
	// PollInterval is the pollInterval suggested to clients, and how often
	// a running task looks for a cancellation made on another replica; 0
	// means DefaultTaskPollInterval.
	PollInterval time.Duration
}

func (o TaskOptions) offerAfter() time.Duration {
	return orDuration(o.OfferAfter, DefaultTaskOfferAfter)
}
func (o TaskOptions) pollInterval() time.Duration {
	return orDuration(o.PollInterval, DefaultTaskPollInterval)
}

func orDuration(v, def time.Duration) time.Duration {
	if v <= 0 {
		return def
	}
	return v
}

// wantsTask says whether a tools/call runs as a task: at 2026-07-28
// when the request declares the extension and the client asked
// (MetaTask) or the tool is offered; before, when the client asked.
func (s *Server) wantsTask(req *mcp.CallToolRequest) bool {
	if s.d.Tasks() == nil || req.Params == nil {
		return false
	}
	_, asked := req.Params.Meta[MetaTask]
	if !isStateless(sessionVersion(req)) {
		return asked
	}
	return declaresTasks(req.Params.Meta) && (asked || s.offered(req.Params.Name))
}

// offered says whether a tool (either name) is run as a task by default.
func (s *Server) offered(name string) bool {
	if s.opts.Plans != nil && isPlanTool(name) {
		return true
	}
	t, ok := s.lookup(name)
	return ok && t.Timeout > s.opts.Tasks.offerAfter()
}

// declaresTasks reads a 2026-07-28 request's per-request capabilities.
func declaresTasks(meta map[string]any) bool {
	caps, _ := meta[mcp.MetaKeyClientCapabilities].(map[string]any)
	ext, _ := caps["extensions"].(map[string]any)
	_, ok := ext[ExtTasks]
	return ok
}

// startTask creates the task of a tools/call (or joins the one its
// idempotency key names) and answers with it; the call runs apart from
// the request (runTask). A request that cannot become a task (bad _meta,
// arguments that are not JSON, a store that is full or away) is answered
// as tools/call would answer it.
func (s *Server) startTask(ctx context.Context, req *mcp.CallToolRequest) (mcp.Result, error) {
	p, stateless := req.Params, isStateless(sessionVersion(req))
	requestID := newRequestID()
	fail := func(de *dispatcher.DispatchError) (mcp.Result, error) {
		res := errorResult(de, requestID)
		if stateless {
			markComplete(res)
		}
		return res, nil
	}
	opts, err := parseOptions(p.Meta)
	if err != nil {
		return fail(refusal(dispatcher.KindSchema, "%v", err))
	}
	tool := p.Name
	if t, ok := s.lookup(p.Name); ok {
		tool = t.Name
	} else if isPlanTool(p.Name) {
		tool = PlanToolName
	}
	fp, err := dispatcher.Fingerprint(tool, p.Arguments)
	if err != nil {
		return fail(refusal(dispatcher.KindSchema, "arguments are not valid JSON: %v", err))
	}
	caller, alias := callerOf(req), ""
	if opts.IdempotencyKey != "" {
		alias = caller + "\x00" + opts.IdempotencyKey
	}
	t, created, err := s.d.Tasks().CreateTask(ctx, idempotency.Task{ID: newTaskID(), Caller: caller, Fingerprint: fp,
		Status: idempotency.TaskWorking}, alias)
	if err != nil {
		return fail(taskStoreError(err, opts.IdempotencyKey))
	}
	if created {
		s.runTask(ctx, req, t.ID, RunningTask{Caller: caller, Tool: tool, Started: time.Now()}, nil)
	}
	s.logger.Debug("task", "task_id", t.ID, "tool", tool, "caller", caller, "joined", !created)
	return s.createdResult(t, stateless), nil
}

// taskStoreError is the envelope of a task the store would not create.
func taskStoreError(err error, key string) *dispatcher.DispatchError {
	var lim *idempotency.LimitError
	switch {
	case errors.Is(err, idempotency.ErrConflict):
		return refusal(dispatcher.KindSchema, "idempotency key %q was already used for a different tool or different arguments; use a new key for a new request", key)
	case errors.As(err, &lim):
		de := refusal(dispatcher.KindRateLimited, "%v; call again later, or without a task", err)
		if lim.RetryAfter > 0 {
			de.RetryAfterMS = lim.RetryAfter.Milliseconds() + 1
		}
		return de
	case errors.Is(err, idempotency.ErrUnavailable):
		return refusal(dispatcher.KindTransient, "the task store cannot be reached now: %v; call again", err)
	}
	return refusal(dispatcher.KindInternal, "task store: %v", err)
}

// runTask runs the call of task id apart from its request: the request
// answered, the call goes on with the caller's identity and values but
// not its cancellation, until it ends or tasks/cancel stops it. Its end
// is stored as the task's; a cancelled run leaves the task as tasks/cancel
// set it (cancelled). A run whose tool asks for input parks the task in
// input_required instead (taskinput.go); resume, when not nil, is the
// run that continues such a call with the answers.
func (s *Server) runTask(reqCtx context.Context, req *mcp.CallToolRequest, id string, info RunningTask, resume *taskResume) {
	ctx := context.WithValue(context.WithValue(context.WithoutCancel(reqCtx), whoKey{}, whoOf(req)), taskIDKey{}, id)
	ctx = withTaskStatus(ctx, s.d.Tasks(), id)
	ask := &taskAsk{}
	ctx = context.WithValue(ctx, taskAskKey{}, ask)
	var prev *parkedCall
	if resume != nil {
		ctx, prev = guestinput.WithResume(ctx, resume.doc), resume.prev
	}
	ctx, cancel := context.WithCancel(ctx)
	s.taskRuns.add(id, cancel, info, taskStatusFrom(ctx))
	call := *req
	params := *req.Params
	params.Meta = maps.Clone(params.Meta)
	delete(params.Meta, MetaTask)
	call.Params = &params
	go s.watchCancel(ctx, id, cancel)
	go func() {
		defer s.taskRuns.remove(id)
		defer cancel()
		res, _ := s.callTool(ctx, &call)
		if ask.ir != nil && ctx.Err() == nil {
			derr := s.parkTask(&call, id, ask, prev)
			if derr == nil {
				if call.Session != nil && !isStateless(sessionVersion(&call)) {
					s.pushTaskInput(call.Session, call.Extra, info.Caller, id)
				}
				return // input_required: the answers start the next run
			}
			res = errorResult(derr, ask.c.requestID)
		}
		end := withLastNote(taskEnd(res, ctx.Err() != nil), taskStatusFrom(ctx))
		// The store may be slow or away: the end is worth a bounded wait,
		// not a goroutine for ever.
		fctx, stop := context.WithTimeout(context.Background(), 30*time.Second)
		defer stop()
		t, err := s.d.Tasks().FinishTask(fctx, id, end)
		if err != nil {
			s.logger.Warn("task end not stored", "task_id", id, "err", err)
			return
		}
		s.logger.Debug("task ended", "task_id", id, "status", t.Status)
	}()
}

// taskEnd is how a run ended, for the store. A tool failure is a
// completed task whose result has isError (its envelope in _meta); the
// key of a failure the dispatcher does not replay is freed, as it is for
// plain calls.
func taskEnd(res *mcp.CallToolResult, stopped bool) idempotency.TaskEnd {
	if stopped || res == nil {
		return idempotency.TaskEnd{Status: idempotency.TaskCancelled, Message: "The task was cancelled.", Unalias: true}
	}
	b, err := json.Marshal(res)
	if err != nil {
		return idempotency.TaskEnd{Status: idempotency.TaskFailed, Message: "encoding the result: " + err.Error(), Unalias: true}
	}
	end := idempotency.TaskEnd{Status: idempotency.TaskCompleted, Result: b, Message: "The call completed."}
	if de, ok := res.Meta[MetaError].(*dispatcher.DispatchError); ok && res.IsError {
		// A statusMessage is display text, and the message may be the
		// guest's own: one line, escaped (issue 27 item 3).
		end.Message = printable.Line(fmt.Sprintf("The tool failed (%s): %s", de.Kind, de.Message))
		end.Unalias = !dispatcher.Replayed(de.Kind)
	}
	return end
}

// watchCancel stops a run when its task is ended elsewhere: tasks/cancel
// on another replica sharing the store. (tasks/cancel here stops it at
// once.)
func (s *Server) watchCancel(ctx context.Context, id string, cancel context.CancelFunc) {
	tick := time.NewTicker(s.opts.Tasks.pollInterval())
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		if t, err := s.d.Tasks().GetTask(ctx, id); err == nil && t.Status.Terminal() {
			cancel()
			return
		}
	}
}

type taskIDKey struct{}

// withRelatedTask adds to meta the task whose run ctx belongs to, if any:
// 2025-11-25 wants every notification about a task to name it (progress
// notifications of a task's call, for one).
func withRelatedTask(ctx context.Context, meta mcp.Meta) mcp.Meta {
	if id, ok := ctx.Value(taskIDKey{}).(string); ok {
		if meta == nil {
			meta = mcp.Meta{}
		}
		meta[MetaRelatedTask] = map[string]any{"taskId": id}
	}
	return meta
}

func newTaskID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return "task-" + hex.EncodeToString(b[:])
}

// liftTaskParam moves a tools/call's params.task (2025-11-25: {"ttl":
// ms}) into params._meta[MetaTask], since the SDK's params type has no
// field for it and would drop it. Params without one come back as they
// are, with false.
func liftTaskParam(params json.RawMessage) (json.RawMessage, bool) {
	var p map[string]json.RawMessage
	if json.Unmarshal(params, &p) != nil {
		return params, false
	}
	return liftTask(p, params)
}

// liftTask is liftTaskParam on params already decoded into p, which it
// may change.
func liftTask(p map[string]json.RawMessage, params json.RawMessage) (json.RawMessage, bool) {
	task, ok := p["task"]
	if !ok || string(task) == "null" {
		return params, false
	}
	meta := map[string]json.RawMessage{}
	if m, ok := p["_meta"]; ok && string(m) != "null" {
		if json.Unmarshal(m, &meta) != nil || meta == nil {
			return params, false // not an object: the SDK refuses the request itself
		}
	}
	meta[MetaTask] = task
	delete(p, "task")
	var err error
	if p["_meta"], err = json.Marshal(meta); err != nil {
		return params, false
	}
	b, err := json.Marshal(p)
	if err != nil {
		return params, false
	}
	return b, true
}

// liftTaskBody applies liftTaskParam to the body of one HTTP message,
// read by readMessage.
func liftTaskBody(msg message, body []byte) []byte {
	if msg.params == nil {
		return body
	}
	params, ok := liftTask(msg.params, msg.fields["params"])
	if !ok {
		return body
	}
	msg.fields["params"] = params
	b, err := json.Marshal(msg.fields)
	if err != nil {
		return body
	}
	return b
}
