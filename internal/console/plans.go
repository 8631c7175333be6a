package console

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"

	"github.com/toolhost/toolhost/events"
)

// The plans view: the last plan sessions (toolhost.plan calls), from the
// plan events on the bus, each with its revisions and what each changed.
// The events are read as their JSON (the plan package's Event) rather than
// through the plan package, which the console must not link: it runs no
// plan.

// planPrefixes are the bus types of plan events.
var planPrefixes = []string{"session.", "plan.", "step."}

// planEvent is the part of a plan.Event the view reads.
type planEvent struct {
	Revision  int    `json:"revision"`
	Kind      string `json:"kind"`
	SessionID string `json:"session_id"`
	Goal      string `json:"goal"`
	Steps     []struct {
		ToolName string `json:"tool_name"`
	} `json:"steps"`
	Removed []int      `json:"removed"`
	Added   []int      `json:"added"`
	Revised []int      `json:"revised"`
	Cause   *planError `json:"cause"`
	Error   *planError `json:"error"`
	Status  string     `json:"status"`
	Reason  string     `json:"reason"`
	Message string     `json:"message"`
}

type planError struct{ Kind, Message string }

func (e *planError) String() string {
	if e == nil {
		return ""
	}
	return e.Kind + ": " + e.Message
}

// planRow is one session as the view shows it.
type planRow struct {
	ID, Caller, Goal, Started   string
	Status, Reason, Message     string
	Succeeded, Failed, Rejected int
	Revisions                   []revisionRow
}

// revisionRow is one adopted plan: its steps' tools, and what it changed
// from the previous revision's steps that had not run.
type revisionRow struct {
	Revision int
	Tools    string
	Changes  string
	Cause    string
}

// sessions keeps the last plan sessions, newest last.
type sessions struct {
	mu   sync.Mutex
	rows []*planRow
	max  int
}

func newSessions(max int) *sessions { return &sessions{max: max} }

// add folds one plan event into its session's row.
func (s *sessions) add(e events.Event) {
	raw, err := json.Marshal(e.Data)
	var pe planEvent
	if err != nil || json.Unmarshal(raw, &pe) != nil || pe.SessionID == "" {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	row := s.find(pe.SessionID, e.Caller)
	if row == nil {
		if pe.Kind != "session.start" {
			return // begun before the console followed the bus, or dropped
		}
		row = &planRow{ID: pe.SessionID, Caller: e.Caller, Goal: pe.Goal, Started: e.Time.UTC().Format("15:04:05"), Status: "running"}
		if len(s.rows) == s.max {
			s.rows = append(s.rows[:0], s.rows[1:]...)
		}
		s.rows = append(s.rows, row)
	}
	switch pe.Kind {
	case "plan.diff":
		tools := make([]string, len(pe.Steps))
		for i, st := range pe.Steps {
			tools[i] = st.ToolName
		}
		row.Revisions = append(row.Revisions, revisionRow{Revision: pe.Revision, Tools: strings.Join(tools, ", "),
			Changes: changes(pe), Cause: pe.Cause.String()})
	case "plan.rejected":
		row.Rejected++
	case "step.succeeded", "step.reused":
		row.Succeeded++
	case "step.failed":
		row.Failed++
	case "session.end":
		row.Status, row.Reason, row.Message = pe.Status, pe.Reason, pe.Message
	}
}

// find is the session id of caller (ids are the caller's to choose, so
// two callers may share one).
func (s *sessions) find(id, caller string) *planRow {
	for i := len(s.rows) - 1; i >= 0; i-- {
		if r := s.rows[i]; r.ID == id && r.Caller == caller {
			return r
		}
	}
	return nil
}

func changes(pe planEvent) string {
	if pe.Revision <= 1 {
		return "first plan"
	}
	return fmt.Sprintf("added %s; removed %s; revised %s", ids(pe.Added), ids(pe.Removed), ids(pe.Revised))
}

func ids(xs []int) string {
	if len(xs) == 0 {
		return "none"
	}
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = fmt.Sprint(x)
	}
	return strings.Join(s, ", ")
}

// snapshot is the sessions caller may see (all, or its own), newest first,
// as copies.
func (s *sessions) snapshot(all bool, identity string) []planRow {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []planRow
	for i := len(s.rows) - 1; i >= 0; i-- {
		if r := s.rows[i]; all || r.Caller == identity {
			c := *r
			c.Revisions = append([]revisionRow(nil), r.Revisions...)
			out = append(out, c)
		}
	}
	return out
}

func renderPlans(o *out, d pageData) {
	o.m("<section id=\"view-plans\" data-view=\"plans\">\n<h2>Plan sessions</h2>\n")
	if len(d.Plans) == 0 {
		o.m("<p class=\"empty\">No plan sessions yet (toolhost.plan calls).</p>\n</section>\n")
		return
	}
	for _, p := range d.Plans {
		o.m(`<article class="plan status-` + esc(p.Status) + `" data-session="` + esc(p.ID) + "\">\n<h3><code>")
		o.t(p.ID)
		o.m("</code> <span class=\"state\">")
		o.t(p.Status)
		o.m("</span> ")
		o.t(p.Goal)
		o.m("</h3>\n<p class=\"note\">")
		o.t(fmt.Sprintf("%s, started %s; steps %d succeeded, %d failed; plans rejected %d", orDash(p.Caller), p.Started,
			p.Succeeded, p.Failed, p.Rejected))
		if p.Reason != "" {
			o.t(fmt.Sprintf("; ended: %s (%s)", p.Reason, p.Message))
		}
		o.m("</p>\n")
		if len(p.Revisions) > 0 {
			o.m("<table class=\"revisions\">\n<thead><tr><th>revision</th><th>steps</th><th>changes</th><th>cause</th></tr></thead>\n<tbody>")
			for _, r := range p.Revisions {
				o.row("", "", fmt.Sprint(r.Revision), r.Tools, r.Changes, orDash(r.Cause))
			}
			o.m("</tbody></table>\n")
		}
		o.m("</article>\n")
	}
	o.m("</section>\n")
}
