package transport

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolhost/toolhost/abi"
	"github.com/toolhost/toolhost/dispatcher"
	"github.com/toolhost/toolhost/events"
	"github.com/toolhost/toolhost/internal/guestnote"
	"github.com/toolhost/toolhost/plan"
)

// PlanToolName is the built-in tool that runs a plan session on the server
// (see docs/PLAN.md). Its arguments are a plan file plus "planner"
// ("static", the default: the given steps; or "rules"); its result is the
// SessionResult, isError when the session failed. A call with a progress
// token receives every event as a notifications/progress whose message is
// the trace line and whose _meta["toolhost/plan_event"] is the event. The
// name is reserved: the loader refuses plugin tools under "toolhost.".
const PlanToolName = "toolhost.plan"

// PlanWireName is toolhost.plan's client-safe name, the one listed unless
// Options.ExactNames. A call may use either.
const PlanWireName = "toolhost_plan"

func isPlanTool(name string) bool { return name == PlanToolName || name == PlanWireName }

// MetaPlanEvent carries a plan event on a progress notification.
const MetaPlanEvent = "toolhost/plan_event"

// PlanOptions configure toolhost.plan (Options.Plans). The zero value is
// usable: every field documents its default.
type PlanOptions struct {
	// Events receives every plan event (type: its kind), as well as the
	// calling client's progress notifications; nil means only the latter.
	Events *events.Bus
	// MaxSteps and MaxParallel cap what a caller may ask for; 0 means the
	// plan package's bounds.
	MaxSteps, MaxParallel int
	// Planners are the operator's extra planners (WebAssembly planner
	// modules, say) by the name a caller gives as "planner", beside
	// "static" and "rules"; nil means none.
	Planners map[string]plan.Planner
	// MaxResultBytes caps each step's result, as the host's output cap
	// caps a single call's; 0 means DefaultMaxResultBytes. (Each step's
	// arguments after $ref substitution get Options.MaxArgsBytes.)
	MaxResultBytes int
	// MaxSessionBytes caps the arguments and results one session holds
	// (see plan.Bounds), and the session result sent back; 0 means
	// DefaultMaxSessionBytes.
	MaxSessionBytes int
}

// Defaults of PlanOptions' byte caps. DefaultMaxResultBytes is the host's
// default output cap; a session holds at most DefaultMaxSessionBytes of
// arguments and results, and its result sent back is at most that too.
const (
	DefaultMaxResultBytes  = 1 << 20
	DefaultMaxSessionBytes = 16 << 20
)

// bounds are the plan executor's byte caps for sessions on this server.
func (s *Server) bounds() plan.Bounds {
	return plan.Bounds{
		MaxArgsBytes:    s.opts.MaxArgsBytes,
		MaxResultBytes:  orDefault(s.opts.Plans.MaxResultBytes, DefaultMaxResultBytes),
		MaxSessionBytes: orDefault(s.opts.Plans.MaxSessionBytes, DefaultMaxSessionBytes),
	}
}

func orDefault(v, def int) int {
	if v <= 0 {
		return def
	}
	return v
}

// addPlanTool, when Options.Plans is set, lists toolhost.plan. Its calls
// reach callPlan through callTool, which every tools/call goes through.
func (s *Server) addPlanTool() {
	if s.opts.Plans == nil {
		return
	}
	t := planTool(s.plannerNames())
	t.Meta = mcp.Meta{MetaToolName: PlanToolName}
	if !s.opts.ExactNames {
		t.Name = PlanWireName
	}
	s.mcp.AddTool(t, s.callTool)
}

// plannerNames are the names a caller may give as "planner": the built-in
// two, then the operator's, sorted.
func (s *Server) plannerNames() []string {
	return append([]string{"static", "rules"}, slices.Sorted(maps.Keys(s.opts.Plans.Planners))...)
}

func planTool(planners []string) *mcp.Tool {
	return &mcp.Tool{
		Name:  PlanToolName,
		Title: "Run a plan",
		Description: "Runs a goal as a plan of tool calls on this server: each step is a tools/call through the " +
			"dispatcher (timeouts, retries, idempotency), and a failed step goes back to the planner for a new " +
			"plan from where it stopped, within max_steps (default 12) executed steps and max_replans (default 5) " +
			`replans. An argument value {"$ref": "/steps/N/result/..."} is replaced by that part of step N's ` +
			`result. planner "static" (default) runs the given steps and does not replan; "rules" is the ` +
			"deterministic demo planner; other names are the operator's planner modules. " +
			"The result is the session: status, reason, history, revisions, events.",
		InputSchema: planInputSchema(planners),
		Annotations: &mcp.ToolAnnotations{Title: "Run a plan"},
	}
}

// planInputSchema is the plan file schema with the file's properties at the
// top level (MCP wants "type": "object" there) and "planner" added.
func planInputSchema(planners []string) json.RawMessage {
	var doc map[string]any
	if err := json.Unmarshal(plan.FileSchema(), &doc); err != nil {
		panic("transport: plan file schema: " + err.Error()) // generated: always JSON
	}
	defs, _ := doc["$defs"].(map[string]any)
	file, _ := defs["File"].(map[string]any)
	delete(defs, "File")
	props, _ := file["properties"].(map[string]any)
	props["planner"] = map[string]any{"type": "string", "enum": planners, "default": "static",
		"description": "static: the given steps, no replanning; rules: the deterministic demo planner; others: the operator's planner modules"}
	out := map[string]any{"type": "object", "properties": props, "required": file["required"],
		"additionalProperties": false, "$defs": defs}
	b, _ := json.Marshal(out)
	// Served like every module's schema: in the normal form all MCP
	// clients accept.
	norm, err := abi.NormalizeSchema(b)
	if err != nil {
		panic("transport: plan file schema: " + err.Error()) // generated: always normalisable
	}
	return norm
}

// callPlan runs one plan session for a tools/call of toolhost.plan.
func (s *Server) callPlan(ctx context.Context, req *mcp.CallToolRequest) *mcp.CallToolResult {
	s.inflight.enter()
	defer s.inflight.exit()
	p := req.Params
	requestID := newRequestID()
	fail := func(kind dispatcher.Kind, format string, args ...any) *mcp.CallToolResult {
		return errorResult(refusal(kind, format, args...), requestID)
	}
	opts, release, derr := s.admit(p, callerOf(req))
	if derr != nil {
		return errorResult(derr, requestID)
	}
	defer release()
	file, planner, err := s.planArgs(p.Arguments)
	if err != nil {
		return fail(dispatcher.KindSchema, "%v", err)
	}
	start := time.Now()
	cfg := plan.Config{
		Dispatcher: planSteps{s: s, trace: traceparent(p.Meta), slots: newStepSlots(&s.callers, opts.Caller)},
		Planner:    planner,
		Reusable:   s.reusable,
		Options:    opts,
		Bus:        s.opts.Plans.Events,
		Observe:    s.progress(ctx, req),
		Bounds:     s.bounds(),
	}
	// The steps' guest logs reach the client; their progress does not: the
	// plan's progress token carries the plan's events.
	ctx = withClientNotes(ctx, req, requestID, false)
	res, err := plan.New(cfg).Run(ctx, plan.Session{ID: file.SessionID, Goal: file.Goal, Limits: s.capped(file.Limits()), OnFailure: file.OnFailure})
	if err != nil {
		return fail(dispatcher.KindSchema, "%v", err)
	}
	b, err := encodeBounded(&res, s.bounds().MaxSessionBytes)
	if err != nil {
		return fail(dispatcher.KindInternal, "encoding the session result: %v", err)
	}
	traceID, _ := traceIDs(ctx)
	s.logger.LogAttrs(context.Background(), slog.LevelInfo, "plan",
		slog.String("request_id", requestID), slog.String("caller", opts.Caller), slog.String("session_id", res.SessionID),
		slog.String("trace_id", traceID),
		slog.String("status", string(res.Status)), slog.String("reason", string(res.Reason)),
		slog.Int("steps", res.StepsExecuted), slog.Int("replans", res.Replans),
		slog.Float64("duration_ms", float64(time.Since(start))/float64(time.Millisecond)))
	summary := fmt.Sprintf("plan %s (%s): %s", res.Status, res.Reason, res.Message)
	return &mcp.CallToolResult{
		IsError:           res.Status != plan.StatusCompleted,
		Content:           []mcp.Content{&mcp.TextContent{Text: summary}, &mcp.TextContent{Text: string(b)}},
		StructuredContent: json.RawMessage(b),
		Meta:              mcp.Meta{MetaRequestID: requestID},
	}
}

// planArgs splits the arguments into the plan file and the planner.
func (s *Server) planArgs(raw json.RawMessage) (*plan.File, plan.Planner, error) {
	if len(bytes.TrimSpace(raw)) == 0 {
		raw = json.RawMessage("{}")
	}
	var members map[string]json.RawMessage
	if err := json.Unmarshal(raw, &members); err != nil || members == nil {
		return nil, nil, fmt.Errorf(`arguments must be a plan file object {"goal": ..., "steps": [...]}`)
	}
	name := "static"
	if v, ok := members["planner"]; ok {
		if err := json.Unmarshal(v, &name); err != nil {
			return nil, nil, fmt.Errorf(`"planner" must be a string, one of %s`, strings.Join(s.plannerNames(), ", "))
		}
		delete(members, "planner")
	}
	rest, _ := json.Marshal(members)
	file, err := plan.ParseFile(rest)
	if err != nil {
		return nil, nil, err
	}
	switch name {
	case "static":
		return file, plan.Static(file.Steps), nil
	case "rules":
		return file, plan.Rules(), nil
	}
	if p, ok := s.opts.Plans.Planners[name]; ok {
		return file, p, nil
	}
	return nil, nil, fmt.Errorf(`"planner" must be one of %s, not %q`, strings.Join(s.plannerNames(), ", "), name)
}

// capped applies the operator's caps to a session's budgets.
func (s *Server) capped(l plan.Limits) plan.Limits {
	if c := s.opts.Plans.MaxSteps; c > 0 {
		if l.MaxSteps == 0 {
			l.MaxSteps = plan.DefaultMaxSteps
		}
		l.MaxSteps = min(l.MaxSteps, c)
	}
	if c := s.opts.Plans.MaxParallel; c > 0 && l.MaxParallel > c {
		l.MaxParallel = c
	}
	return l
}

// reusable says whether a listed tool's results may be reused.
func (s *Server) reusable(tool string) bool {
	t, ok := s.lookup(tool)
	return ok && (t.Idempotent || t.ReadOnly)
}

// progress returns the plan's observer: each event becomes a progress
// notification when the caller sent a progress token.
func (s *Server) progress(ctx context.Context, req *mcp.CallToolRequest) func(plan.Event) {
	token := req.Params.GetProgressToken()
	if token == nil || req.Session == nil {
		return nil
	}
	var line strings.Builder
	trace := plan.NewTrace(&line, false)
	return func(e plan.Event) {
		line.Reset()
		trace.Event(e)
		err := req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{
			ProgressToken: token,
			Progress:      float64(e.Seq),
			Message:       strings.TrimSuffix(line.String(), "\n"),
			Meta:          withRelatedTask(ctx, mcp.Meta{MetaPlanEvent: e}),
		})
		if err != nil {
			s.logger.Debug("plan progress notification not sent", "err", err)
		}
	}
}

// planSteps dispatches a plan's steps as tools/call does: through the
// dispatcher, each holding a place in its caller's cap (see stepSlots),
// with one audit line each, joined to the plan call's trace.
type planSteps struct {
	s     *Server
	trace string
	slots *stepSlots
}

func (ps planSteps) Call(ctx context.Context, c dispatcher.Call) (json.RawMessage, error) {
	start := time.Now()
	// A step names its tool as a client would (wire or manifest name) and
	// reaches only the tools a client may call.
	var o dispatcher.Outcome
	ctx, span := ps.s.stepSpan(ctx, c)
	info := &callInfo{requestID: newRequestID(), caller: c.Caller, trace: ps.trace, key: c.IdempotencyKey}
	info.traceID, info.spanID = traceIDs(ctx)
	if tool, derr := ps.s.permitted(ctx, info, c.Tool, nil); derr != nil {
		o = ps.s.refused(c, derr)
	} else if release, derr := ps.slots.take(ctx, ps.s.opts.MaxCallsPerCaller); derr != nil {
		c.Tool = tool
		o = dispatcher.Outcome{Err: derr, Cancelled: errors.Is(ctx.Err(), context.Canceled)}
	} else {
		c.Tool = tool
		if sink := guestnote.SinkFrom(ctx); sink != nil {
			ctx = guestnote.WithSink(ctx, forStep(sink, tool)) // the step's tool logs as itself
		}
		o = ps.s.d.Do(ctx, c)
		release()
		if o.Input != nil {
			// A plan has no user to ask, at any revision.
			o = dispatcher.Outcome{Attempts: o.Attempts, Err: dispatcher.Unanswerable(c.Tool, o.Attempts)}
		}
	}
	info.tool = c.Tool
	endStep(span, o)
	ps.s.audit(info, &mcp.CallToolParamsRaw{Name: c.Tool, Arguments: c.Args}, o, time.Since(start))
	if o.Err != nil {
		return nil, o.Err
	}
	return o.Result, nil
}
