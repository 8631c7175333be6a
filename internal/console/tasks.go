package console

import (
	"fmt"
	"time"

	"github.com/toolhost/toolhost/registry"
)

// Task is an MCP task whose call runs on this server now.
type Task struct {
	ID, Caller, Tool string
	Started          time.Time
	// Note is the tool's latest progress or log note.
	Note string
}

type taskRow struct {
	ID, Tool, Caller, Running, Note string
}

// tasks: the running tasks the caller may see, its own (anyone's for a
// caller who sees everything) of tools it may list. A task id is shown
// cut to its first 8 characters: the owner knows it, and no one else
// needs more to tell two apart.
func (c *Console) tasks(v viewer, reg *registry.Registry) []taskRow {
	if c.opts.Tasks == nil {
		return nil
	}
	now := c.opts.Now()
	var out []taskRow
	for _, t := range c.opts.Tasks() {
		if !v.all && t.Caller != v.identity {
			continue
		}
		if reg != nil && !c.visibleTool(v, reg, t.Tool) && registered(reg, t.Tool) {
			continue // a tool it may no longer list (toolhost.plan is no registry tool)
		}
		id := t.ID
		if len(id) > 8 {
			id = id[:8] + "…"
		}
		out = append(out, taskRow{ID: id, Tool: t.Tool, Caller: t.Caller, Running: runningFor(now.Sub(t.Started)), Note: t.Note})
	}
	return out
}

func renderTasks(o *out, d pageData) {
	o.m("<section id=\"view-tasks\" data-view=\"tasks\">\n<h2>Tasks running</h2>\n")
	if len(d.Tasks) == 0 {
		o.m("<p class=\"empty\">No task is running on this server.</p>\n</section>\n")
		return
	}
	o.m("<table>\n<thead><tr><th>task</th><th>tool</th><th>caller</th><th>running for</th><th>latest note</th></tr></thead>\n<tbody>")
	for _, t := range d.Tasks {
		o.row("", t.Tool, t.ID, t.Tool, orDash(t.Caller), t.Running, orDash(t.Note))
	}
	o.m("</tbody></table>\n</section>\n")
}

func runningFor(d time.Duration) string {
	return fmt.Sprint(max(d, 0).Round(100 * time.Millisecond))
}

func registered(reg *registry.Registry, name string) bool {
	_, ok := reg.Lookup(name)
	return ok
}
