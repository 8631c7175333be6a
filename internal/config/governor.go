package config

import (
	"cmp"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/toolhost/toolhost/abi"
	"github.com/toolhost/toolhost/governor"
	"github.com/toolhost/toolhost/internal/hostconf"
	"github.com/toolhost/toolhost/internal/hostmatch"
)

// Grant is a [grants."MODULE.wasm"] section: what one module's egress may
// reach. The embedded hostconf.Grant holds every key but the headers, whose
// values are Secrets: they stay redacted wherever a Config is printed, and
// references are resolved after parsing (see secret.go). EgressGrants puts
// their values into the hostconf.Grant.
type Grant struct {
	// Grant's Headers stay nil here.
	hostconf.Grant
	// Headers ([grants."MODULE.wasm".headers."HOST"]) are injected per
	// host pattern.
	Headers map[string]map[string]Secret
}

// GovernorConfig returns the [governor], [governor.priorities] and
// [quotas."NAME"] settings for governor.New; the caller adds its Store and
// Events. Zero fields were not set (the governor's defaults apply). A nil
// Config returns the zero Config.
func (c *Config) GovernorConfig() governor.Config {
	if c == nil {
		return governor.Config{}
	}
	g := c.Governor
	g.Priorities = maps.Clone(g.Priorities)
	g.Quotas = slices.Clone(g.Quotas)
	for i, q := range g.Quotas {
		q.Hosts, q.Tools = slices.Clone(q.Hosts), maps.Clone(q.Tools)
		g.Quotas[i] = q
	}
	return g
}

// EgressGrants returns the [grants."MODULE.wasm"] sections for
// toolhostv1.Egress.Grants, with their header secrets' values. A nil Config
// returns nil.
func (c *Config) EgressGrants() map[string]hostconf.Grant {
	if c == nil || len(c.Grants) == 0 {
		return nil
	}
	out := make(map[string]hostconf.Grant, len(c.Grants))
	for name, g := range c.Grants {
		hg := g.Grant
		hg.Hosts, hg.Methods, hg.Schemes = slices.Clone(hg.Hosts), slices.Clone(hg.Methods), slices.Clone(hg.Schemes)
		hg.AllowNetworks = slices.Clone(hg.AllowNetworks)
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
		field{"throttle_reserve", func(path []string, v any) { p.ratioOrNone(path, v, &g.ThrottleReserve) }},
		field{"aging", func(path []string, v any) { p.duration(path, v, &g.Aging) }},
		field{"broadcast", func(path []string, v any) { p.duration(path, v, &g.Broadcast) }},
		field{"max_wait", func(path []string, v any) { p.duration(path, v, &g.MaxWait) }},
		field{"default_block", func(path []string, v any) { p.duration(path, v, &g.DefaultBlock) }},
		field{"max_block", func(path []string, v any) { p.duration(path, v, &g.MaxBlock) }},
		field{"max_report_block", func(path []string, v any) { p.duration(path, v, &g.MaxReportBlock) }},
		field{"max_agents", func(path []string, v any) {
			p.count(path, v, &g.MaxAgents)
			if g.MaxAgents > governor.MaxMaxAgents {
				p.fail(path, "must be at most %d, not %d (each quota reads every named agent's usage at each status)", governor.MaxMaxAgents, g.MaxAgents)
			}
		}},
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
	// The governor's defaults, for a pair the file sets only half of.
	enter, exit := cmp.Or(g.ThrottleEnter, 0.8), cmp.Or(g.ThrottleExit, 0.6)
	if exit >= enter {
		which := "throttle_exit"
		if g.ThrottleExit == 0 {
			which = "throttle_enter"
		}
		p.fail(concat(path, []string{which}), "throttle_exit (%v) must be below throttle_enter (%v): a quota leaves throttle mode at a lower usage than it enters it", exit, enter)
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
		q := governor.Quota{Name: name}
		p.fields(qp, qt,
			field{"capacity", func(path []string, v any) { p.count64(path, v, &q.Capacity) }},
			field{"interval", func(path []string, v any) { p.duration(path, v, &q.Interval) }},
			field{"burst", func(path []string, v any) { p.count64(path, v, &q.Burst) }},
			field{"hosts", func(path []string, v any) { q.Hosts = p.hostPatterns(path, v) }},
			field{"tools", func(path []string, v any) {
				tt := p.table(path, v, "["+keyString(path)+"]")
				for _, tool := range slices.Sorted(maps.Keys(tt)) {
					tp := concat(path, []string{tool})
					if !abi.ValidToolName(tool) {
						p.fail(tp, "tool name %q does not match ^[A-Za-z0-9_.-]{1,128}$ (no manifest can declare it)", truncate(tool))
						continue
					}
					var cost int64
					p.count64(tp, tt[tool], &cost)
					if cost > 0 {
						if q.Tools == nil {
							q.Tools = make(map[string]int64)
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
				if burst := burst(q); cost > burst {
					p.fail(concat(qp, []string{"tools", tool}), "a call draws %d tokens, more than the burst (%d) could ever grant", cost, burst)
				}
			}
			c.Governor.Quotas = append(c.Governor.Quotas, q) // in name order
		}
	}
}

// burst is the quota's burst, defaulted as the governor does.
func burst(q governor.Quota) int64 {
	if q.Burst > 0 {
		return q.Burst
	}
	per := float64(q.Capacity) * float64(time.Second) / float64(q.Interval)
	return min(max(1, int64(per+0.999999)), q.Capacity)
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
					g.MaxRequestBytes = int64(n)
				}
			}},
			field{"max_response_bytes", func(path []string, v any) {
				if n, ok := p.size(path, v, 1, 1<<30, "", "over 1 GiB"); ok {
					g.MaxResponseBytes = int64(n)
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
