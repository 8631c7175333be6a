package plan

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"time"

	"github.com/toolhost/toolhost/dispatcher"
	"github.com/toolhost/toolhost/events"
)

// Dispatcher runs the executor's tool calls; *dispatcher.Dispatcher
// satisfies it. Call must be safe for concurrent use, honour ctx, and
// report a failure as a *dispatcher.DispatchError (any other error counts
// as internal).
type Dispatcher interface {
	Call(ctx context.Context, c dispatcher.Call) (json.RawMessage, error)
}

// Config configures an Executor. Dispatcher and Planner are required; every
// other field's zero value is documented.
type Config struct {
	// Dispatcher runs the steps.
	Dispatcher Dispatcher
	// Planner makes the plans.
	Planner Planner
	// Reusable says whether a tool's results may be reused by an identical
	// later step (the tool is idempotent or read-only); nil means never.
	// It must be safe for concurrent use.
	Reusable func(tool string) bool
	// Options are the dispatch options of every step (timeout, budget,
	// priority, caller); the executor sets IdempotencyKey.
	Options dispatcher.Options
	// PlannerTimeout bounds each planner call; 0 means 30 s.
	PlannerTimeout time.Duration
	// Observe receives each event as it is logged, in order, from one
	// goroutine per session; nil means none. The session waits for it. It
	// must not modify the event: its slices are the log's.
	Observe func(Event)
	// Bus, when set, receives every event (type: its kind; data: the
	// Event, with SessionID set on every kind; caller: Options.Caller), without argument and result values
	// unless the bus keeps them (Event.Redacted). Each step's retries are
	// logged as step.retry whether or not it is set (the executor asks the
	// dispatcher for them per call).
	Bus *events.Bus
	// Now stamps events; nil means time.Now. A clock returning the zero
	// time leaves events unstamped (as in golden tests).
	Now func() time.Time
	// Bounds cap the bytes a session handles; the zero value means none
	// (a server sets them: see Bounds).
	Bounds Bounds
}

// DefaultPlannerTimeout bounds a planner call when Config.PlannerTimeout is
// 0.
const DefaultPlannerTimeout = 30 * time.Second

// Session is one run's parameters.
type Session struct {
	// ID names the session in idempotency keys; empty means a fresh random
	// id. It must match ^[A-Za-z0-9_.-]{1,64}$.
	ID string
	// Goal is what the planner plans for.
	Goal string
	// Limits are the budgets; zero fields mean the defaults.
	Limits Limits
	// OnFailure is what the executor does when a step that sets no
	// on_failure of its own fails; empty means OnFailureReplan.
	OnFailure OnFailure
}

// Executor runs plan sessions. It is immutable and safe for concurrent
// use: each Run has its own state.
type Executor struct {
	cfg Config
}

// New returns an Executor. It panics when cfg has no Dispatcher or
// Planner: that is a programming error.
func New(cfg Config) *Executor {
	if cfg.Dispatcher == nil || cfg.Planner == nil {
		panic("plan.New: Config.Dispatcher and Config.Planner are required")
	}
	if cfg.PlannerTimeout <= 0 {
		cfg.PlannerTimeout = DefaultPlannerTimeout
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Reusable == nil {
		cfg.Reusable = func(string) bool { return false }
	}
	return &Executor{cfg: cfg}
}

// Run runs a session to its end and returns its result, which is Fold of
// the session's event log. The error is only for a Session that is not
// valid (an ID that breaks the rule); everything that goes wrong during the
// session is in the result. When ctx ends, steps in flight are awaited (the
// dispatcher stops them) and the session ends with reason cancelled.
func (e *Executor) Run(ctx context.Context, s Session) (SessionResult, error) {
	if s.ID == "" {
		s.ID = newSessionID()
	} else if !ValidSessionID(s.ID) {
		return SessionResult{}, fmt.Errorf("plan: session id %q does not match ^[A-Za-z0-9_.-]{1,64}$", s.ID)
	}
	if err := checkOnFailure(0, "session on_failure", s.OnFailure); err != nil {
		return SessionResult{}, fmt.Errorf("plan: %s", err.Message)
	}
	r := &run{cfg: &e.cfg, id: s.ID, goal: s.Goal, lim: s.Limits.resolve(), onFailure: s.OnFailure, f: newFolder(), keys: map[string]int{}}
	r.session(ctx)
	return r.f.res, nil
}

func newSessionID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// run is one session's state: the folder (the log's fold, which every
// decision reads) and the bookkeeping of steps in flight.
type run struct {
	cfg  *Config
	id   string
	goal string
	lim  Limits
	// onFailure is the session's default way forward ("" for replan).
	onFailure OnFailure
	f         *folder
	seq       uint64
	retries   retryQueue
	keys      map[string]int // idempotency key → step id, for steps in flight
	held      int            // bytes of arguments and results the log holds (see Bounds)
	deps      map[int][]int  // the current plan's dependencies by step id
	stepOf    map[int]Step   // the current plan's steps by id
}

// emit stamps an event, folds it, and hands it on.
func (r *run) emit(e Event) {
	r.seq++
	e.Seq = r.seq
	e.Revision = len(r.f.res.Revisions)
	if e.Kind == EventPlanDiff {
		e.Revision++
	}
	if t := r.cfg.Now(); !t.IsZero() {
		e.Time = t.UTC().Round(0)
	}
	r.held += heldBytes(e)
	r.f.apply(e)
	if r.cfg.Observe != nil {
		r.cfg.Observe(e)
	}
	if r.cfg.Bus != nil {
		// On the bus, sessions interleave: every event names its own, where
		// the session's log names it once, at session.start.
		be := e
		be.SessionID = r.id
		r.cfg.Bus.PublishFor(r.cfg.Options.Caller, string(e.Kind), be)
	}
}

// session is the state machine: plan, validate, execute, and replan until
// the goal is met or a budget, the planner or the caller ends it.
func (r *run) session(ctx context.Context) {
	lim := r.lim
	r.emit(Event{Kind: EventSessionStart, SessionID: r.id, Goal: r.goal, Limits: &lim, OnFailure: r.onFailure})
	var cause *Error
	for {
		if ctx.Err() != nil {
			r.end(ReasonCancelled, cause, "the session was cancelled: %v", context.Cause(ctx))
			return
		}
		if r.f.calls > r.lim.MaxReplans {
			r.end(ReasonReplanBudget, cause, "%s, and all %d replans allowed are spent", describe(cause), r.lim.MaxReplans)
			return
		}
		steps, err := r.plan(ctx, cause)
		switch {
		case err != nil && ctx.Err() != nil:
			r.end(ReasonCancelled, cause, "the session was cancelled while planning: %v", context.Cause(ctx))
			return
		case err != nil:
			perr := &Error{Kind: KindPlanner, Message: err.Error()}
			r.emit(Event{Kind: EventPlanError, Error: perr, Cause: cause})
			r.end(ReasonFatal, perr, "the planner failed: %s", err)
			return
		case len(steps) == 0:
			r.emit(Event{Kind: EventPlanEmpty, Cause: cause})
			if cause == nil {
				r.end(ReasonNoPlan, nil, "the planner has no plan for the goal")
			} else {
				r.end(ReasonNoPlan, cause, "%s, and the planner has no new plan", describe(cause))
			}
			return
		}
		valid, verr := validate(steps, r.f.known())
		if verr != nil {
			r.emit(Event{Kind: EventPlanRejected, Steps: printable(steps), Error: verr, Cause: cause})
			cause = verr
			continue
		}
		if perr := r.overSession(0, "plan", heldBytes(Event{Steps: valid})); perr != nil {
			r.end(ReasonFatal, perr, "%s", perr.Message)
			return
		}
		r.adopt(valid, cause)
		out := r.execute(ctx)
		if out.reason != "" {
			r.end(out.reason, out.err, "%s", out.message)
			return
		}
		cause = out.err
	}
}

// plan calls the planner, bounded by PlannerTimeout.
func (r *run) plan(ctx context.Context, cause *Error) ([]Step, error) {
	pctx, cancel := context.WithTimeout(ctx, r.cfg.PlannerTimeout)
	defer cancel()
	in := Input{Goal: r.goal, History: r.f.history(), LastError: cause, Pending: r.f.pending(), NextID: r.f.known().nextID}
	steps, err := r.cfg.Planner.Plan(pctx, in)
	if err != nil && pctx.Err() != nil && ctx.Err() == nil {
		return nil, fmt.Errorf("the planner did not answer within %v", r.cfg.PlannerTimeout)
	}
	return steps, err
}

// adopt makes steps the next revision and logs the diff against the steps
// of the previous revision that had not run.
func (r *run) adopt(steps []Step, cause *Error) {
	before := map[int]Step{}
	for _, s := range r.f.pending() {
		before[s.ID] = s
	}
	removed, added, revised := []int{}, []int{}, []int{}
	r.deps = make(map[int][]int, len(steps))
	r.stepOf = make(map[int]Step, len(steps))
	for _, s := range steps {
		r.stepOf[s.ID] = s
		r.deps[s.ID] = dependencies(s)
		old, ok := before[s.ID]
		switch {
		case !ok:
			added = append(added, s.ID)
		case old.ToolName != s.ToolName || !sameJSON(old.Args, s.Args):
			revised = append(revised, s.ID)
		}
		delete(before, s.ID)
	}
	for _, s := range r.f.pending() {
		if _, gone := before[s.ID]; gone {
			removed = append(removed, s.ID)
		}
	}
	r.emit(Event{Kind: EventPlanDiff, Steps: steps, Removed: removed, Added: added, Revised: revised, Cause: cause})
}

// end closes the log.
func (r *run) end(reason Reason, err *Error, format string, args ...any) {
	status := StatusFailed
	switch reason {
	case ReasonGoalMet:
		status = StatusCompleted
	case ReasonCancelled:
		status = StatusCancelled
	}
	r.emit(Event{Kind: EventSessionEnd, Status: status, Reason: reason, Error: err, Message: fmt.Sprintf(format, args...)})
}

// describe says what an error did, for session.end messages.
func describe(e *Error) string {
	switch {
	case e == nil:
		return "the plan did not complete"
	case e.Kind == KindInvalidPlan && e.StepID == 0:
		return "a plan was rejected (invalid_plan)"
	case e.Kind == KindInvalidPlan:
		return fmt.Sprintf("a plan was rejected (invalid_plan at step %d)", e.StepID)
	}
	return fmt.Sprintf("step %d failed (%s)", e.StepID, e.Kind)
}

// printable returns steps safe to put in an event: arguments or results
// that are not JSON (a Go planner can return anything) become strings.
func printable(steps []Step) []Step {
	out := make([]Step, min(len(steps), MaxPlanSteps))
	copy(out, steps)
	fix := func(b json.RawMessage) json.RawMessage {
		if len(b) == 0 {
			return b
		}
		if c, err := compact(b); err == nil {
			return c
		}
		s, _ := json.Marshal(string(b))
		return s
	}
	for i := range out {
		out[i].Args, out[i].Result = fix(out[i].Args), fix(out[i].Result)
	}
	return out
}
