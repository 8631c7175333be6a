package console

import (
	"fmt"
	"html"
	"strings"
)

// The views are written by these functions rather than by html/template:
// text/template's method calls by name (reflect's MethodByName) make the
// linker keep every exported method of every type in the binary, 12.6 MB
// more (docs/RATIONALE.md). Markup here is constant; every value from the
// server's state goes through esc, and values appear only as element text
// or inside double-quoted attributes, the two contexts esc is right for.

// esc escapes s for HTML text and double-quoted attribute values.
func esc(s string) string { return html.EscapeString(s) }

// out collects a page.
type out struct{ strings.Builder }

// m writes constant markup.
func (o *out) m(markup string) { o.WriteString(markup) }

// t writes escaped text.
func (o *out) t(s string) { o.WriteString(esc(s)) }

// cells writes one table row of escaped cells, with an optional class and
// data-tool attribute.
func (o *out) row(class, tool string, cells ...string) {
	o.m("<tr")
	if class != "" {
		o.m(` class="` + esc(class) + `"`)
	}
	if tool != "" {
		o.m(` data-tool="` + esc(tool) + `"`)
	}
	o.m(">")
	for _, c := range cells {
		o.m("<td>" + esc(c) + "</td>")
	}
	o.m("</tr>\n")
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// renderPage is the whole page; the views only when d.Authed.
func renderPage(o *out, d pageData) {
	o.m("<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n" +
		"<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>toolhost console</title>\n" +
		"<link rel=\"stylesheet\" href=\"/ui/static/console.css\">\n<script src=\"/ui/static/console.js\" defer></script>\n" +
		"</head>\n<body>\n<header>\n<h1>toolhost <small>")
	o.t(d.Version)
	o.m("</small></h1>\n<p id=\"who\">")
	if d.Identity != "" {
		o.m("signed in as <b>")
		o.t(d.Identity)
		o.m("</b>")
	}
	o.m("</p>\n<button id=\"signout\" type=\"button\" hidden>Sign out</button>\n</header>\n<section id=\"signin\"")
	if d.Authed {
		o.m(" hidden")
	}
	o.m(">\n<h2>Sign in</h2>\n<p>Enter a token of this server (a line of its token file, after the colon). " +
		"It is kept in this tab's session storage and sent as an Authorization header; never in a URL.</p>\n" +
		"<p><label for=\"token\">Token</label> <input id=\"token\" type=\"password\" autocomplete=\"off\" spellcheck=\"false\"> " +
		"<button id=\"signin-button\" type=\"button\">Sign in</button></p>\n<p id=\"signin-error\" role=\"alert\"></p>\n" +
		"<noscript><p>JavaScript is off: the views are shown when the request itself carries " +
		"<code>Authorization: Bearer TOKEN</code>.</p></noscript>\n</section>\n<main id=\"views\">")
	if d.Authed {
		renderView(o, "all", d)
	}
	o.m("</main>\n</body>\n</html>\n")
}

// renderView writes one view (or "all" of them) alone.
func renderView(o *out, name string, d pageData) {
	switch name {
	case "all":
		// Who the views are for, for the script to show after signing in.
		o.m(`<p id="signed-in" hidden data-identity="` + esc(d.Identity) + `"></p>` + "\n")
		for _, v := range []string{"tools", "chart", "breakers", "governor", "plans", "tasks", "calls"} {
			renderView(o, v, d)
		}
	case "tools":
		renderTools(o, d)
	case "breakers":
		renderBreakers(o, d)
	case "governor":
		renderGovernor(o, d)
	case "calls":
		renderCalls(o, d)
	case "chart":
		renderChart(o, d)
	case "plans":
		renderPlans(o, d)
	case "tasks":
		renderTasks(o, d)
	}
}

func renderTools(o *out, d pageData) {
	o.m("<section id=\"view-tools\" data-view=\"tools\">\n<h2>Tools</h2>\n")
	if len(d.Files) == 0 {
		o.m("<p class=\"empty\">No module files.</p>\n")
	}
	for _, f := range d.Files {
		o.m(`<article class="module state-` + esc(f.State) + `">` + "\n<h3><span class=\"path\">")
		o.t(f.Path)
		o.m("</span> <span class=\"state\">")
		o.t(f.State)
		o.m("</span>")
		if f.Version != "" {
			o.m(" <code class=\"version\">" + esc(f.Version) + "</code>")
		}
		o.m("</h3>\n")
		if f.Note != "" {
			o.m("<p class=\"note\">" + esc(f.Note) + "</p>\n")
		}
		if len(f.Tools) > 0 {
			o.m("<table class=\"tools\">\n<thead><tr><th>tool</th><th>wire name</th><th>title</th><th>flags</th>" +
				"<th>timeout</th><th>warm pool</th></tr></thead>\n<tbody>")
			for _, t := range f.Tools {
				pool := "-"
				if p := t.Pool; p != nil {
					pool = fmt.Sprintf("%d idle, %d busy, %d warming, %d callers", p.Idle, p.Busy, p.Warming, p.Callers)
				}
				o.row("", t.Name, t.Name, t.Wire, t.Title, t.Flags, t.Timeout, pool)
			}
			o.m("</tbody></table>\n")
		}
		o.m("</article>\n")
	}
	o.m("</section>\n")
}

func renderBreakers(o *out, d pageData) {
	o.m("<section id=\"view-breakers\" data-view=\"breakers\">\n<h2>Circuit breakers</h2>\n")
	if len(d.Breakers) == 0 {
		o.m("<p class=\"empty\">No breakers yet: every tool is closed until it is called.</p>\n</section>\n")
		return
	}
	o.m("<table>\n<thead><tr><th>tool</th><th>state</th><th>failure rate</th><th>cool-down left</th></tr></thead>\n<tbody>")
	for _, b := range d.Breakers {
		o.row("breaker-"+b.State, b.Tool, b.Tool, b.State, b.Failures, orDash(b.CoolDown))
	}
	o.m("</tbody></table>\n</section>\n")
}

func renderGovernor(o *out, d pageData) {
	o.m("<section id=\"view-governor\" data-view=\"governor\">\n<h2>Governor quotas</h2>\n")
	if len(d.Quotas) == 0 {
		o.m("<p class=\"empty\">No quotas configured.</p>\n</section>\n")
		return
	}
	o.m("<table>\n<thead><tr><th>quota</th><th>level</th><th>granted / capacity</th><th>throttles</th><th>tokens now</th><th>waiting</th>" +
		"<th>blocked until</th><th>use per agent</th></tr></thead>\n<tbody>")
	for _, q := range d.Quotas {
		var agents []string
		for _, a := range q.Agents {
			name := a.Name
			if name == "" {
				name = "(anonymous)"
			}
			agents = append(agents, fmt.Sprintf("%s: %d", name, a.Used))
		}
		o.row("", "", q.Name, q.Mode, fmt.Sprintf("%d / %d", q.Used, q.Capacity),
			fmt.Sprintf("from %d, until below %d", q.ThrottleAt, q.ThrottleBelow), q.Available, fmt.Sprint(q.Waiting),
			orDash(q.Blocked), orDash(strings.Join(agents, ", ")))
	}
	o.m("</tbody></table>\n</section>\n")
}

func renderCalls(o *out, d pageData) {
	o.m("<section id=\"view-calls\" data-view=\"calls\">\n<h2>Calls</h2>\n" +
		"<form id=\"calls-form\" method=\"get\" action=\"/ui\"><label for=\"calls-filter\">Filter</label> " +
		"<input id=\"calls-filter\" name=\"q\" value=\"" + esc(d.Filter) + "\" placeholder=\"tool, caller or outcome\"> " +
		"<button type=\"submit\">Filter</button> <span id=\"calls-live\"></span></form>\n<table id=\"calls\">\n" +
		"<thead><tr><th>time (UTC)</th><th>tool</th><th>caller</th><th>outcome</th><th>attempts</th><th>duration</th></tr></thead>\n<tbody>")
	for _, c := range d.Calls {
		o.row("outcome-"+c.Outcome, "", c.Time, c.Tool, c.Caller, c.Outcome, fmt.Sprint(c.Attempts), fmt.Sprintf("%.1f ms", c.DurationMS))
	}
	o.m("</tbody></table>\n</section>\n")
}
