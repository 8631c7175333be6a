package plan

import (
	"slices"
)

// Status is where a session stands.
type Status string

// The statuses. A log without session.end folds to StatusRunning.
const (
	StatusRunning   Status = "running"
	StatusCompleted Status = "completed"
	StatusFailed    Status = "failed"
	// StatusCancelled: the caller cancelled the session (reason
	// cancelled); its steps in flight were stopped.
	StatusCancelled Status = "cancelled"
)

// Reason says why a session ended.
type Reason string

// The reasons. A completed session always has ReasonGoalMet.
const (
	// ReasonGoalMet: every step of the last revision succeeded, was
	// reused, or failed under on_failure skip (or was skipped because of
	// one: the message counts them).
	ReasonGoalMet Reason = "goal_met"
	// ReasonStepBudget: a step was refused because MaxSteps steps had run.
	ReasonStepBudget Reason = "step_budget"
	// ReasonReplanBudget: a step failed (or a plan was rejected) and
	// MaxReplans replans were spent.
	ReasonReplanBudget Reason = "replan_budget"
	// ReasonNoPlan: the planner returned no steps, for the goal itself or
	// after a failure.
	ReasonNoPlan Reason = "no_plan"
	// ReasonFatal: a step failed fatally (budget_exceeded) or the planner
	// failed.
	ReasonFatal Reason = "fatal_error"
	// ReasonCancelled: the caller's context ended the session.
	ReasonCancelled Reason = "cancelled"
	// ReasonAborted: a step whose on_failure is abort failed.
	ReasonAborted Reason = "aborted"
)

// Revision is one adopted plan.
type Revision struct {
	Revision int    `json:"revision"`
	Steps    []Step `json:"steps"`
	Removed  []int  `json:"removed"`
	Added    []int  `json:"added"`
	Revised  []int  `json:"revised"`
	// Cause is the error that led to this revision; nil for the first.
	Cause *Error `json:"cause,omitempty"`
}

// SessionResult is a session's outcome: a fold over its event log (Fold).
type SessionResult struct {
	SessionID string `json:"session_id"`
	Goal      string `json:"goal"`
	Status    Status `json:"status"`
	Reason    Reason `json:"reason,omitempty"`
	// Message explains the end in a sentence.
	Message string `json:"message,omitempty"`
	// Error is the error behind a failed session, when there is one: the
	// fatal error, or the step failure no plan could route around.
	Error  *Error `json:"error,omitempty"`
	Limits Limits `json:"limits"`
	// StepsExecuted counts dispatched steps (charged to MaxSteps).
	StepsExecuted int `json:"steps_executed"`
	// Replans counts planner calls after the first.
	Replans int `json:"replans"`
	// History is every step that ran, was reused, or failed, in the order
	// it finished, with its resolved arguments and result or error.
	History   []Step     `json:"history"`
	Revisions []Revision `json:"revisions"`
	Events    []Event    `json:"events"`
}

// Fold rebuilds a session's result from its event log. Folding a prefix of
// a log gives the session as it stood then (StatusRunning until
// session.end).
func Fold(events []Event) SessionResult {
	f := newFolder()
	for _, e := range events {
		f.apply(e)
	}
	return f.res
}

// folder applies events one by one. The executor keeps one per session and
// reads every decision's inputs from it, so that no state lives outside the
// log.
type folder struct {
	res       SessionResult
	plan      []Step       // the current revision's steps
	settled   map[int]bool // current-revision steps that started, were reused or failed
	running   map[int]Step // started, not finished
	byID      map[int]int  // history index by step id
	highWater int          // largest step id ever adopted
	calls     int          // planner calls
	succeeded map[string]int
}

func newFolder() *folder {
	return &folder{
		res:     SessionResult{Status: StatusRunning, History: []Step{}, Revisions: []Revision{}, Events: []Event{}},
		settled: map[int]bool{}, running: map[int]Step{}, byID: map[int]int{}, succeeded: map[string]int{},
	}
}

func (f *folder) apply(e Event) {
	f.res.Events = append(f.res.Events, e)
	switch e.Kind {
	case EventSessionStart:
		f.res.SessionID, f.res.Goal = e.SessionID, e.Goal
		if e.Limits != nil {
			f.res.Limits = *e.Limits
		}
	case EventPlanDiff:
		f.called()
		f.plan = e.Steps
		f.settled = map[int]bool{}
		for _, s := range e.Steps {
			f.highWater = max(f.highWater, s.ID)
		}
		f.res.Revisions = append(f.res.Revisions, Revision{Revision: e.Revision, Steps: e.Steps,
			Removed: e.Removed, Added: e.Added, Revised: e.Revised, Cause: e.Cause})
	case EventPlanRejected, EventPlanEmpty, EventPlanError:
		f.called()
	case EventStepStarted:
		f.settled[e.StepID] = true
		f.res.StepsExecuted++
		s := Step{ID: e.StepID, ToolName: e.ToolName, Args: e.Args, ExpectedOutcome: e.ExpectedOutcome, Revision: e.Revision}
		if p, ok := f.planned(e.StepID); ok {
			s.DependsOn = p.DependsOn
		}
		f.running[e.StepID] = s
	case EventStepSucceeded:
		s := f.running[e.StepID]
		delete(f.running, e.StepID)
		s.Result = e.Result
		f.record(s)
		if id, err := identity(s.ToolName, s.Args); err == nil {
			if _, dup := f.succeeded[id]; !dup {
				f.succeeded[id] = s.ID
			}
		}
	case EventStepFailed, EventStepSkipped:
		s, ok := f.running[e.StepID]
		if ok {
			delete(f.running, e.StepID)
		} else {
			// Failed before dispatch (a reference that did not resolve),
			// or skipped: the step as planned.
			s, _ = f.planned(e.StepID)
			s.Revision = e.Revision
		}
		f.settled[e.StepID] = true
		s.Error = e.Error
		f.record(s)
	case EventStepReused:
		f.settled[e.StepID] = true
		s := Step{ID: e.StepID, ToolName: e.ToolName, Args: e.Args, ExpectedOutcome: e.ExpectedOutcome,
			Result: e.Result, ReusedFrom: e.ReusedFrom, Revision: e.Revision}
		if p, ok := f.planned(e.StepID); ok {
			s.DependsOn = p.DependsOn
		}
		f.record(s)
	case EventSessionEnd:
		f.res.Status, f.res.Reason, f.res.Message, f.res.Error = e.Status, e.Reason, e.Message, e.Error
	}
}

func (f *folder) called() {
	f.calls++
	f.res.Replans = max(f.calls-1, 0)
}

func (f *folder) record(s Step) {
	f.byID[s.ID] = len(f.res.History)
	f.res.History = append(f.res.History, s)
}

func (f *folder) planned(id int) (Step, bool) {
	i := slices.IndexFunc(f.plan, func(s Step) bool { return s.ID == id })
	if i < 0 {
		return Step{}, false
	}
	return f.plan[i], true
}

// step returns the history entry of id.
func (f *folder) step(id int) (*Step, bool) {
	i, ok := f.byID[id]
	if !ok {
		return nil, false
	}
	return &f.res.History[i], true
}

// pending returns the current revision's steps that have not started.
func (f *folder) pending() []Step {
	var out []Step
	for _, s := range f.plan {
		if !f.settled[s.ID] {
			out = append(out, s)
		}
	}
	return out
}

// known is what the next plan is validated against.
func (f *folder) known() *known {
	k := &known{history: make(map[int]*Step, len(f.byID)), pending: map[int]bool{}, nextID: f.highWater + 1}
	for i := range f.res.History {
		s := &f.res.History[i]
		k.history[s.ID] = s
		k.nextID = max(k.nextID, s.ID+1)
	}
	for _, s := range f.pending() {
		k.pending[s.ID] = true
	}
	return k
}

// history returns a copy of the history, for a planner.
func (f *folder) history() []Step {
	return slices.Clone(f.res.History)
}

// identity is what makes two steps the same for partial-plan caching: the
// tool and its canonical resolved arguments.
func identity(tool string, args []byte) (string, error) {
	c, err := canonical(args)
	if err != nil {
		return "", err
	}
	return tool + "\x00" + argsHash(c), nil
}
