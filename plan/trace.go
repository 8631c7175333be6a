package plan

import (
	"fmt"
	"io"
	"strings"
)

// Trace renders a session's events as a human-readable trace: each step as
// it starts and ends, retries, and every plan revision with removed steps
// struck through, added ones marked "+" and revised ones "~". A Trace
// remembers the plan it has seen, so it is for one session and not safe
// for concurrent use.
type Trace struct {
	w        io.Writer
	ansi     bool
	plan     map[int]Step
	limits   Limits
	executed int
	calls    int // planner calls so far
}

// NewTrace returns a Trace writing to w. With ansi, removed steps are
// struck through with an ANSI escape (for a terminal); otherwise they are
// written ~~like this~~.
func NewTrace(w io.Writer, ansi bool) *Trace {
	return &Trace{w: w, ansi: ansi, plan: map[int]Step{}}
}

// Event writes the lines for e. Write errors are ignored: a trace is
// advisory.
func (t *Trace) Event(e Event) {
	if s := t.Line(e); s != "" {
		fmt.Fprintln(t.w, s)
	}
}

// Line returns the text for e (possibly several lines, without a final
// newline) and updates what the trace remembers.
func (t *Trace) Line(e Event) string {
	switch e.Kind {
	case EventSessionStart:
		if e.Limits != nil {
			t.limits = *e.Limits
		}
		return fmt.Sprintf("session %s: %q (at most %d steps, %d replans, %d in parallel)",
			e.SessionID, e.Goal, t.limits.MaxSteps, t.limits.MaxReplans, t.limits.MaxParallel)
	case EventPlanDiff:
		t.calls++
		return t.diff(e)
	case EventPlanRejected:
		t.calls++
		return fmt.Sprintf("plan rejected%s: %s", t.replan(), errText(e.Error))
	case EventPlanEmpty:
		t.calls++
		return fmt.Sprintf("the planner returned no steps%s", t.replan())
	case EventPlanError:
		t.calls++
		return fmt.Sprintf("the planner failed: %s", errText(e.Error))
	case EventStepStarted:
		t.executed++
		return fmt.Sprintf("step %d %s [%d/%d]%s", e.StepID, e.ToolName, t.executed, t.limits.MaxSteps, purpose(e.ExpectedOutcome))
	case EventStepRetry:
		return fmt.Sprintf("step %d %s: attempt %d failed (%s); retrying in %.0f ms",
			e.StepID, e.ToolName, e.Attempt, clip(errText(e.Error), 120), e.DelayMS)
	case EventStepSucceeded:
		return fmt.Sprintf("step %d %s ok: %s", e.StepID, e.ToolName, clip(string(e.Result), 100))
	case EventStepFailed:
		next := "replan"
		switch {
		case e.Fatal:
			next = "fatal"
		case e.OnFailure != "":
			next = string(e.OnFailure)
		}
		return fmt.Sprintf("step %d %s failed: %s → %s", e.StepID, e.ToolName, clip(errText(e.Error), 180), next)
	case EventStepReused:
		return fmt.Sprintf("step %d %s reused step %d's result: %s", e.StepID, e.ToolName, e.ReusedFrom, clip(string(e.Result), 100))
	case EventStepSkipped:
		return fmt.Sprintf("step %d %s skipped: %s", e.StepID, e.ToolName, clip(e.Error.Message, 180))
	case EventStepRefused:
		return fmt.Sprintf("step %d %s refused: all %d steps of the budget have run", e.StepID, e.ToolName, t.limits.MaxSteps)
	case EventSessionEnd:
		return fmt.Sprintf("%s (%s): %s", e.Status, e.Reason, e.Message)
	}
	return ""
}

func (t *Trace) diff(e Event) string {
	var b strings.Builder
	fmt.Fprintf(&b, "revision %d%s", e.Revision, t.replan())
	if e.Cause != nil {
		fmt.Fprintf(&b, ", after %s", describe(e.Cause))
	}
	b.WriteByte(':')
	for _, id := range e.Removed {
		fmt.Fprintf(&b, "\n  - %s", t.struck(fmt.Sprintf("%d %s", id, t.plan[id].ToolName)))
	}
	added := idSet(e.Added)
	revised := idSet(e.Revised)
	next := map[int]Step{}
	for _, s := range e.Steps {
		mark := " "
		switch {
		case added[s.ID]:
			mark = "+"
		case revised[s.ID]:
			mark = "~"
		}
		fmt.Fprintf(&b, "\n  %s %d %s%s", mark, s.ID, s.ToolName, purpose(s.ExpectedOutcome))
		next[s.ID] = s
	}
	t.plan = next
	return b.String()
}

// replan says which replan the last planner call was, if it was one.
func (t *Trace) replan() string {
	if t.calls <= 1 {
		return ""
	}
	return fmt.Sprintf(" (replan %d of %d)", t.calls-1, t.limits.MaxReplans)
}

// errText is "kind: message", without the step prefix Error adds.
func errText(e *Error) string {
	if e == nil {
		return "unknown error"
	}
	return string(e.Kind) + ": " + e.Message
}

func (t *Trace) struck(s string) string {
	if t.ansi {
		return "\x1b[9m" + s + "\x1b[29m"
	}
	return "~~" + s + "~~"
}

func idSet(ids []int) map[int]bool {
	m := make(map[int]bool, len(ids))
	for _, id := range ids {
		m[id] = true
	}
	return m
}

func purpose(expected string) string {
	if expected == "" {
		return ""
	}
	return " — " + expected
}

// clip shortens s to about n bytes on a rune boundary.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n] + "…"
}
