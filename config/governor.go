package config

import (
	"maps"
	"net/netip"
	"slices"
	"strings"
	"time"

	"github.com/toolhost/toolhost/abi"
	"github.com/toolhost/toolhost/governor"
	"github.com/toolhost/toolhost/imports/toolhostv1"
	"github.com/toolhost/toolhost/internal/hostmatch"
)

// Governor is the [governor] section and the [quotas."NAME"] sections: the
// rate governor's settings and the shared upstream quotas (docs/CONFIG.md,
// docs/GOVERNOR.md). Zero fields were not set.
type Governor struct {
	// Window (window) is the throttle look-back.
	Window time.Duration
	// ThrottleEnter and ThrottleExit (throttle_enter, throttle_exit) are
	// the fractions of the window's allowance at which a quota enters and
	// leaves throttle mode; nil means not set.
	ThrottleEnter, ThrottleExit *float64
	// ThrottleReserve (throttle_reserve) is the fraction of a quota's
	// burst background draws leave in throttle mode.
	ThrottleReserve *float64
	// Aging (aging) raises a waiter's class by one per Aging waited.
	Aging time.Duration
	// Broadcast (broadcast) is the period of governor.state events.
	Broadcast time.Duration
	// MaxWait (max_wait) bounds a wait without a deadline.
	MaxWait time.Duration
	// DefaultBlock and MaxBlock (default_block, max_block): how long a
	// 429 without Retry-After blocks a quota, and the cap on any block.
	DefaultBlock, MaxBlock time.Duration
	// MaxReportBlock (max_report_block) caps the block one governor.report
	// over /rpc can set.
	MaxReportBlock time.Duration
	// Priorities ([governor.priorities]) is the default class per tool.
	Priorities map[string]governor.Priority
	// Quotas are the [quotas."NAME"] sections, by name.
	Quotas map[string]Quota
}

// Quota is a [quotas."NAME"] section.
type Quota struct {
	// Capacity (capacity) tokens per Interval (interval).
	Capacity int
	Interval time.Duration
	// Burst (burst); 0 means a second's worth of capacity.
	Burst int
	// Hosts (hosts) are egress host patterns drawing one token per request.
	Hosts []string
	// Tools (tools) maps tool names to the tokens each call draws.
	Tools map[string]int
}

// Grant is a [grants."MODULE.wasm"] section: what one module's egress may
// reach (see toolhostv1.Grant for each field).
type Grant struct {
	Hosts            []string
	Methods          []string
	Schemes          []string
	MaxRequestBytes  uint64
	MaxResponseBytes uint64
	AllowNetworks    []netip.Prefix
	// Headers ([grants."MODULE.wasm".headers."HOST"]) are injected per
	// host pattern. Values are secrets: literals, or references resolved
	// by ResolveSecrets (see secret.go).
	Headers map[string]map[string]Secret
}

// GovernorConfig returns base with the file's [governor] settings, its
// quotas and its per-tool priorities applied. A nil Config returns base.
func (c *Config) GovernorConfig(base governor.Config) governor.Config {
	if c == nil {
		return base
	}
	g := c.Governor
	out := base
	setDur := func(dst *time.Duration, v time.Duration) {
		if v > 0 {
			*dst = v
		}
	}
	setDur(&out.Window, g.Window)
	setDur(&out.Aging, g.Aging)
	setDur(&out.Broadcast, g.Broadcast)
	setDur(&out.MaxWait, g.MaxWait)
	setDur(&out.DefaultBlock, g.DefaultBlock)
	setDur(&out.MaxBlock, g.MaxBlock)
	setDur(&out.MaxReportBlock, g.MaxReportBlock)
	for _, f := range []struct {
		dst *float64
		v   *float64
	}{{&out.ThrottleEnter, g.ThrottleEnter}, {&out.ThrottleExit, g.ThrottleExit}, {&out.ThrottleReserve, g.ThrottleReserve}} {
		if f.v != nil {
			*f.dst = *f.v
		}
	}
	if g.ThrottleReserve != nil && *g.ThrottleReserve == 0 {
		out.ThrottleReserve = -1 // the governor reads 0 as "the default"
	}
	if len(g.Priorities) > 0 {
		out.Priorities = maps.Clone(base.Priorities)
		if out.Priorities == nil {
			out.Priorities = make(map[string]governor.Priority)
		}
		maps.Copy(out.Priorities, g.Priorities)
	}
	out.Quotas = slices.Clone(base.Quotas)
	for _, name := range slices.Sorted(maps.Keys(g.Quotas)) {
		q := g.Quotas[name]
		gq := governor.Quota{Name: name, Capacity: int64(q.Capacity), Interval: q.Interval, Burst: int64(q.Burst),
			Hosts: slices.Clone(q.Hosts)}
		for tool, cost := range q.Tools {
			if gq.Tools == nil {
				gq.Tools = make(map[string]int64)
			}
			gq.Tools[tool] = int64(cost)
		}
		out.Quotas = append(out.Quotas, gq)
	}
	return out
}

// EgressGrants returns the [grants."MODULE.wasm"] sections for
// toolhostv1.Egress.Grants. A nil Config returns nil.
func (c *Config) EgressGrants() map[string]toolhostv1.Grant {
	if c == nil || len(c.Grants) == 0 {
		return nil
	}
	out := make(map[string]toolhostv1.Grant, len(c.Grants))
	for name, g := range c.Grants {
		hg := toolhostv1.Grant{Hosts: slices.Clone(g.Hosts), Methods: slices.Clone(g.Methods), Schemes: slices.Clone(g.Schemes),
			MaxRequestBytes: int64(g.MaxRequestBytes), MaxResponseBytes: int64(g.MaxResponseBytes),
			AllowNetworks: slices.Clone(g.AllowNetworks)}
		if len(g.Headers) > 0 {
			hg.Headers = make(map[string]map[string]string, len(g.Headers))
			for h, kv := range g.Headers {
				hg.Headers[h] = make(map[string]string, len(kv))
				for name, s := range kv {
					hg.Headers[h][name] = s.Value()
				}
			}
		}
		out[name] = hg
	}
	return out
}

// governorSection checks [governor].
func (p *checker) governorSection(path []string, v any, c *Config) {
	t := p.table(path, v, "[governor]")
	if t == nil {
		return
	}
	g := &c.Governor
	p.fields(path, t,
		field{"window", func(path []string, v any) { p.duration(path, v, &g.Window) }},
		field{"throttle_enter", func(path []string, v any) { p.fraction(path, v, &g.ThrottleEnter) }},
		field{"throttle_exit", func(path []string, v any) { p.fraction(path, v, &g.ThrottleExit) }},
		field{"throttle_reserve", func(path []string, v any) { p.ratio(path, v, &g.ThrottleReserve) }},
		field{"aging", func(path []string, v any) { p.duration(path, v, &g.Aging) }},
		field{"broadcast", func(path []string, v any) { p.duration(path, v, &g.Broadcast) }},
		field{"max_wait", func(path []string, v any) { p.duration(path, v, &g.MaxWait) }},
		field{"default_block", func(path []string, v any) { p.duration(path, v, &g.DefaultBlock) }},
		field{"max_block", func(path []string, v any) { p.duration(path, v, &g.MaxBlock) }},
		field{"max_report_block", func(path []string, v any) { p.duration(path, v, &g.MaxReportBlock) }},
		field{"priorities", func(path []string, v any) {
			pt := p.table(path, v, "[governor.priorities]")
			for _, tool := range slices.Sorted(maps.Keys(pt)) {
				tp := concat(path, []string{tool})
				if !abi.ValidToolName(tool) {
					p.fail(tp, "tool name %q does not match ^[A-Za-z0-9_.-]{1,128}$ (no manifest can declare it)", truncate(tool))
					continue
				}
				s, ok := pt[tool].(string)
				if !ok {
					p.fail(tp, "must be a priority class name (critical, interactive, normal, background), not %s", describe(pt[tool]))
					continue
				}
				prio, err := governor.ParsePriority(s)
				if err != nil {
					p.fail(tp, "%q is not a priority class (critical, interactive, normal, background)", truncate(s))
					continue
				}
				if g.Priorities == nil {
					g.Priorities = make(map[string]governor.Priority)
				}
				g.Priorities[tool] = prio
			}
		}},
	)
	enter, exit := 0.8, 0.6
	if g.ThrottleEnter != nil {
		enter = *g.ThrottleEnter
	}
	if g.ThrottleExit != nil {
		exit = *g.ThrottleExit
	}
	if exit >= enter {
		which := "throttle_exit"
		if g.ThrottleExit == nil {
			which = "throttle_enter"
		}
		p.fail(concat(path, []string{which}), "throttle_exit (%v) must be below throttle_enter (%v): a quota leaves throttle mode at a lower usage than it enters it", exit, enter)
	}
}

// fraction is ratio without 0: a threshold of 0 would mean "always".
func (p *checker) fraction(path []string, v any, dst **float64) {
	var f *float64
	p.ratio(path, v, &f)
	if f != nil && *f == 0 {
		p.fail(path, "must be greater than 0 (leave the key out for the default)")
		return
	}
	if f != nil {
		*dst = f
	}
}

// quotasSection checks the [quotas."NAME"] sections.
func (p *checker) quotasSection(path []string, v any, c *Config) {
	t := p.table(path, v, `[quotas."NAME"] sections`)
	for _, name := range slices.Sorted(maps.Keys(t)) {
		qp := concat(path, []string{name})
		if !abi.ValidToolName(name) {
			p.fail(qp, "quota name %q must match ^[A-Za-z0-9_.-]{1,128}$", truncate(name))
			continue
		}
		qt := p.table(qp, t[name], "["+keyString(qp)+"]")
		if qt == nil {
			continue
		}
		var q Quota
		p.fields(qp, qt,
			field{"capacity", func(path []string, v any) { p.count(path, v, &q.Capacity) }},
			field{"interval", func(path []string, v any) { p.duration(path, v, &q.Interval) }},
			field{"burst", func(path []string, v any) { p.count(path, v, &q.Burst) }},
			field{"hosts", func(path []string, v any) { q.Hosts = p.hostPatterns(path, v) }},
			field{"tools", func(path []string, v any) {
				tt := p.table(path, v, "["+keyString(path)+"]")
				for _, tool := range slices.Sorted(maps.Keys(tt)) {
					tp := concat(path, []string{tool})
					if !abi.ValidToolName(tool) {
						p.fail(tp, "tool name %q does not match ^[A-Za-z0-9_.-]{1,128}$ (no manifest can declare it)", truncate(tool))
						continue
					}
					var cost int
					p.count(tp, tt[tool], &cost)
					if cost > 0 {
						if q.Tools == nil {
							q.Tools = make(map[string]int)
						}
						q.Tools[tool] = cost
					}
				}
			}},
		)
		switch {
		case q.Capacity == 0:
			p.fail(qp, "needs capacity (tokens per interval)")
		case q.Interval == 0:
			p.fail(qp, `needs interval (a duration such as "1m")`)
		case q.Burst > q.Capacity:
			p.fail(concat(qp, []string{"burst"}), "burst %d is more than the capacity %d", q.Burst, q.Capacity)
		case q.Interval/time.Duration(q.Capacity) < 1:
			p.fail(concat(qp, []string{"interval"}), "%d tokens per %v is more than one per nanosecond; use a longer interval", q.Capacity, q.Interval)
		default:
			for tool, cost := range q.Tools {
				if burst := q.burst(); cost > burst {
					p.fail(concat(qp, []string{"tools", tool}), "a call draws %d tokens, more than the burst (%d) could ever grant", cost, burst)
				}
			}
			if c.Governor.Quotas == nil {
				c.Governor.Quotas = make(map[string]Quota)
			}
			c.Governor.Quotas[name] = q
		}
	}
}

// burst is the quota's burst, defaulted as the governor does.
func (q Quota) burst() int {
	if q.Burst > 0 {
		return q.Burst
	}
	per := float64(q.Capacity) * float64(time.Second) / float64(q.Interval)
	return min(max(1, int(per+0.999999)), q.Capacity)
}

// grantsSection checks the [grants."MODULE.wasm"] sections.
func (p *checker) grantsSection(path []string, v any, c *Config) {
	t := p.table(path, v, `[grants."MODULE.wasm"] sections`)
	for _, module := range slices.Sorted(maps.Keys(t)) {
		gp := concat(path, []string{module})
		if !strings.HasSuffix(module, ".wasm") || strings.ContainsAny(module, `/\`) {
			p.fail(gp, "%q is not a module file name: grants are keyed by the .wasm file's name in the plugins folder, as in [grants.\"fetch.wasm\"]", truncate(module))
			continue
		}
		gt := p.table(gp, t[module], "["+keyString(gp)+"]")
		if gt == nil {
			continue
		}
		var g Grant
		p.fields(gp, gt,
			field{"hosts", func(path []string, v any) { g.Hosts = p.hostPatterns(path, v) }},
			field{"methods", func(path []string, v any) {
				for _, m := range p.stringList(path, v) {
					if m == "" || strings.ContainsAny(m, " \t\"(),/:;<=>?@[\\]{}") {
						p.fail(path, "%q is not an HTTP method", truncate(m))
						continue
					}
					g.Methods = append(g.Methods, strings.ToUpper(m))
				}
			}},
			field{"schemes", func(path []string, v any) {
				for _, s := range p.stringList(path, v) {
					if s != "http" && s != "https" {
						p.fail(path, `%q is not a scheme egress can use ("http" or "https")`, truncate(s))
						continue
					}
					g.Schemes = append(g.Schemes, s)
				}
			}},
			field{"max_request_bytes", func(path []string, v any) {
				if n, ok := p.size(path, v, 1, 1<<30, "", "over 1 GiB"); ok {
					g.MaxRequestBytes = n
				}
			}},
			field{"max_response_bytes", func(path []string, v any) {
				if n, ok := p.size(path, v, 1, 1<<30, "", "over 1 GiB"); ok {
					g.MaxResponseBytes = n
				}
			}},
			field{"allow_networks", func(path []string, v any) { g.AllowNetworks = p.networks(path, v) }},
			field{"headers", func(path []string, v any) {
				ht := p.table(path, v, "["+keyString(path)+".\"HOST\"]")
				for _, h := range slices.Sorted(maps.Keys(ht)) {
					hp := concat(path, []string{h})
					if _, err := hostmatch.Parse(h); err != nil {
						p.fail(hp, "%v", err)
						continue
					}
					kv := p.table(hp, ht[h], "["+keyString(hp)+"]")
					for _, name := range slices.Sorted(maps.Keys(kv)) {
						s, ok := p.secret(concat(hp, []string{name}), kv[name])
						if !ok {
							continue
						}
						if g.Headers == nil {
							g.Headers = make(map[string]map[string]Secret)
						}
						if g.Headers[h] == nil {
							g.Headers[h] = make(map[string]Secret)
						}
						g.Headers[h][name] = s
					}
				}
			}},
		)
		if len(g.Hosts) == 0 {
			p.fail(gp, "grants no hosts: add hosts = [\"api.example.com\", \"*.example.org\"]")
			continue
		}
		if c.Grants == nil {
			c.Grants = make(map[string]Grant)
		}
		c.Grants[module] = g
	}
}

// stringList checks an array of strings.
func (p *checker) stringList(path []string, v any) []string {
	arr, ok := v.([]any)
	if !ok {
		p.fail(path, "must be an array of strings, not %s", describe(v))
		return nil
	}
	out := make([]string, 0, len(arr))
	for _, e := range arr {
		s, ok := e.(string)
		if !ok {
			p.fail(path, "must be an array of strings; it holds %s", describe(e))
			return nil
		}
		out = append(out, s)
	}
	return out
}

// hostPatterns checks an array of host patterns.
func (p *checker) hostPatterns(path []string, v any) []string {
	var out []string
	for _, s := range p.stringList(path, v) {
		if _, err := hostmatch.Parse(s); err != nil {
			p.fail(path, "%v", err)
			continue
		}
		out = append(out, s)
	}
	return out
}
