package console

import (
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/toolhost/toolhost/abi"
	"github.com/toolhost/toolhost/breaker"
	"github.com/toolhost/toolhost/governor"
	"github.com/toolhost/toolhost/loader"
	"github.com/toolhost/toolhost/registry"
)

// pageData is what the page and its views render (render.go).
type pageData struct {
	Version  string
	Authed   bool
	Identity string
	Filter   string
	Files    []fileRow
	Breakers []breakerRow
	Quotas   []quotaRow
	Calls    []callRow
	// Chart is the last ten minutes by chartStep, oldest first; Minute
	// the last minute summed.
	Chart  []chartPoint
	Minute chartPoint
	Plans  []planRow
	Tasks  []taskRow
}

type fileRow struct {
	Path, State, Version, Note string
	Tools                      []toolRow
}

type toolRow struct {
	Name, Wire, Title, Flags, Timeout string
	Pool                              *Pool
}

type breakerRow struct{ Tool, State, CoolDown, Failures string }

type quotaRow struct {
	Name, Mode, Blocked string
	Used, Capacity      int64
	ThrottleAt          int64
	ThrottleBelow       int64
	Available           string
	Waiting             int
	Agents              []agentRow
}

type agentRow struct {
	Name string
	Used int64
}

// views are the sections /ui/view/NAME renders alone, for the script's
// refreshes.
var views = map[string]bool{"tools": true, "breakers": true, "governor": true, "calls": true, "chart": true, "plans": true, "tasks": true, "all": true}

func (c *Console) servePage(w http.ResponseWriter, r *http.Request) {
	c.render(w, r, "page", http.StatusOK)
}

func (c *Console) serveView(w http.ResponseWriter, r *http.Request) {
	name := strings.TrimPrefix(r.URL.Path, "/ui/view/")
	if !views[name] {
		http.NotFound(w, r)
		return
	}
	c.render(w, r, name, http.StatusOK)
}

// serveSignIn answers /ui without a token: the page with no data, asking
// for one.
func (c *Console) serveSignIn(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("WWW-Authenticate", `Bearer realm="toolhost"`)
	var o out
	renderPage(&o, pageData{Version: c.opts.Version})
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(http.StatusUnauthorized)
	_, _ = w.Write([]byte(o.String()))
}

func (c *Console) render(w http.ResponseWriter, r *http.Request, name string, status int) {
	v := c.viewerOf(r)
	d := pageData{Version: c.opts.Version, Authed: true, Identity: v.identity, Filter: r.URL.Query().Get("q")}
	reg := c.registry()
	// Only what the view shows: the script refreshes the views one by one,
	// and the quotas are read from the governor's store (Redis, in a
	// fleet).
	all := name == "page" || name == "all"
	if all || name == "tools" {
		d.Files = c.files(v, reg)
	}
	if all || name == "breakers" {
		d.Breakers = c.breakers(v, reg)
	}
	if all || name == "governor" {
		d.Quotas = c.quotas(r, v)
	}
	if all || name == "calls" {
		d.Calls = c.calls(v, reg, d.Filter)
	}
	if all || name == "chart" {
		d.Chart, d.Minute = c.charted(v)
	}
	if all || name == "plans" {
		d.Plans = c.plans.snapshot(v.all, v.identity)
	}
	if all || name == "tasks" {
		d.Tasks = c.tasks(v, reg)
	}
	var o out
	if name == "page" {
		renderPage(&o, d)
	} else {
		renderView(&o, name, d)
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write([]byte(o.String()))
}

func (c *Console) registry() *registry.Registry {
	if c.opts.Tools == nil {
		return nil
	}
	return c.opts.Tools()
}

// visibleTool: the caller may list the tool of this manifest name.
func (c *Console) visibleTool(v viewer, reg *registry.Registry, name string) bool {
	if reg == nil {
		return false
	}
	t, ok := reg.Lookup(name)
	return ok && c.mayList(v, t)
}

// files: every module file with the tools the caller may list; a file
// that serves none of those is shown only to a caller who sees
// everything (an operator; anyone when there are no access rules), as
// its path and a refusal's reason are the operator's business.
func (c *Console) files(v viewer, reg *registry.Registry) []fileRow {
	if c.opts.Files == nil {
		return nil
	}
	pools := map[string]*Pool{}
	if c.opts.Pools != nil {
		for _, p := range c.opts.Pools() {
			sum := pools[p.Tool]
			if sum == nil {
				sum = &Pool{Tool: p.Tool}
				pools[p.Tool] = sum
			}
			sum.Idle, sum.Busy, sum.Warming, sum.Callers = sum.Idle+p.Idle, sum.Busy+p.Busy, sum.Warming+p.Warming, sum.Callers+p.Callers
		}
	}
	seesAll := v.all || c.opts.Access.Empty()
	files := c.opts.Files()
	slices.SortFunc(files, func(a, b loader.FileState) int { return strings.Compare(a.Path, b.Path) })
	var out []fileRow
	for _, f := range files {
		row := fileRow{Path: f.Path, State: f.State, Version: short(f.SHA256), Note: fileNote(f)}
		for _, name := range f.Tools {
			t, ok := (*registry.Tool)(nil), false
			if reg != nil {
				t, ok = reg.Lookup(name)
			}
			if !ok || !c.mayList(v, t) {
				continue
			}
			row.Tools = append(row.Tools, toolRow{Name: t.Name, Wire: t.WireName, Title: t.Title, Flags: flags(t),
				Timeout: t.Timeout.String(), Pool: pools[t.Name]})
		}
		if len(row.Tools) == 0 && !seesAll {
			continue
		}
		out = append(out, row)
	}
	return out
}

func fileNote(f loader.FileState) string {
	switch {
	case f.State != loader.StateServing:
		return f.Reason
	case f.Verifying:
		return "listed from its embedded manifest; code compiling"
	case !f.Compiled:
		return "code not in memory (compiles on the next call)"
	}
	return ""
}

func flags(t *registry.Tool) string {
	var fs []string
	for _, f := range []struct {
		on   bool
		name string
	}{{t.ReadOnly, "read-only"}, {t.Idempotent, "idempotent"}, {t.Destructive, "destructive"}, {t.OpenWorld, "open-world"},
		{t.Instances == abi.InstancesReuse, "reuse"}} {
		if f.on {
			fs = append(fs, f.name)
		}
	}
	return strings.Join(fs, ", ")
}

func short(sha string) string {
	if len(sha) > 12 {
		return sha[:12]
	}
	return sha
}

// failureRate is a closed breaker's window against its trip point.
func failureRate(b breaker.Status) string {
	if b.State != breaker.Closed {
		return "-"
	}
	rate := "0%"
	if b.Calls > 0 {
		rate = fmt.Sprintf("%.0f%%", 100*float64(b.Failures)/float64(b.Calls))
	}
	return fmt.Sprintf("%d of %d calls (%s) in %s; opens at %.0f%% of %d or more", b.Failures, b.Calls, rate,
		b.Settings.Window, 100*b.Settings.FailureRate, b.Settings.MinCalls)
}

func (c *Console) breakers(v viewer, reg *registry.Registry) []breakerRow {
	if c.opts.Breakers == nil {
		return nil
	}
	now := c.opts.Now()
	var out []breakerRow
	for _, b := range c.opts.Breakers() {
		if !c.visibleTool(v, reg, b.Tool) {
			continue
		}
		row := breakerRow{Tool: b.Tool, State: b.State.String(), Failures: failureRate(b)}
		if b.State == breaker.Open && !b.RetryAt.IsZero() {
			row.CoolDown = max(b.RetryAt.Sub(now), 0).Round(100 * time.Millisecond).String()
		}
		out = append(out, row)
	}
	return out
}

// charted is the chart of the calls the caller may see: every caller's
// for one who sees everything, else its own (of any tool: the chart's
// series are kept per caller, not per tool).
func (c *Console) charted(v viewer) ([]chartPoint, chartPoint) {
	pts := c.chart.view(c.opts.Now(), v.all, v.identity)
	out := make([]chartPoint, len(pts))
	for i := range pts {
		out[i] = span(pts[i : i+1])
	}
	return out, span(pts[len(pts)-int(time.Minute/chartStep):])
}

// quotas: every quota's level; the use per agent is every agent's for a
// caller who sees everything, else the caller's own.
func (c *Console) quotas(r *http.Request, v viewer) []quotaRow {
	if c.opts.Quotas == nil {
		return nil
	}
	var out []quotaRow
	for _, q := range c.opts.Quotas(r.Context()) {
		row := quotaRow{Name: q.Quota, Mode: string(q.Mode), Used: q.Used, Capacity: q.Capacity,
			ThrottleAt: q.ThrottleAt, ThrottleBelow: q.ThrottleBelow,
			Available: fmt.Sprintf("%.1f", q.Available), Waiting: q.Waiting}
		if q.BlockedUntil != nil && q.Mode == governor.ModeBlocked {
			row.Blocked = q.BlockedUntil.UTC().Format(time.RFC3339)
		}
		for _, name := range slices.Sorted(maps.Keys(q.Agents)) {
			if v.all || name == v.identity {
				row.Agents = append(row.Agents, agentRow{Name: name, Used: q.Agents[name].Used})
			}
		}
		out = append(out, row)
	}
	return out
}
