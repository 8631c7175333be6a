// Package metrics exposes toolhost's Prometheus metrics. It learns what
// happens from the event bus (the dispatcher knows nothing of Prometheus)
// and from gauges the server hands it.
package metrics

import (
	"context"
	"net/http"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/toolhost/toolhost/dispatcher"
	"github.com/toolhost/toolhost/events"
	"github.com/toolhost/toolhost/governor"
)

// Metrics is one registry of toolhost's metrics. Create it with New; it is
// safe for concurrent use.
type Metrics struct {
	reg      *prometheus.Registry
	calls    *prometheus.CounterVec
	attempts *prometheus.CounterVec
	retries  *prometheus.CounterVec
	duration *prometheus.HistogramVec
	breaker  *prometheus.GaugeVec
	dropped  prometheus.Counter
	quota    *prometheus.GaugeVec
	agent    *prometheus.GaugeVec

	mu     sync.Mutex
	agents map[string]map[string]bool // quota → agents with a series now
}

// Gauges are read when Prometheus scrapes; nil fields are left out.
type Gauges struct {
	// InFlight is the number of guest instances running a call.
	InFlight func() float64
	// Tools is the number of tools served.
	Tools func() float64
	// CacheHits and CacheMisses count module loads the compilation cache
	// served and those it had to compile.
	CacheHits, CacheMisses func() float64
}

// New registers every metric, with Go runtime and process collectors.
func New(g Gauges) *Metrics {
	m := &Metrics{
		reg: prometheus.NewRegistry(),
		calls: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "toolhost_calls_total", Help: "Dispatches by tool and outcome (ok, cancelled or the error kind), refusals and idempotent replays included.",
		}, []string{"tool", "outcome"}),
		attempts: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "toolhost_attempts_total", Help: "Attempts started, retries included.",
		}, []string{"tool"}),
		retries: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "toolhost_retries_total", Help: "Retries scheduled, by the kind that caused them.",
		}, []string{"tool", "reason"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "toolhost_call_duration_seconds", Help: "Dispatch latency, retries and waits included.",
			Buckets: []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30},
		}, []string{"tool"}),
		breaker: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "toolhost_breaker_state", Help: "Circuit breaker state per tool: 0 closed, 1 half-open, 2 open.",
		}, []string{"tool"}),
		dropped: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "toolhost_metrics_events_dropped_total", Help: "Events the metrics missed: always 0 since they observe the bus synchronously; kept for dashboards that chart it.",
		}),
		quota: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "toolhost_governor_level",
			Help: "Governor quota levels from governor.state: used and capacity over the throttle window, available tokens, waiting draws, mode (0 normal, 1 throttled, 2 blocked).",
		}, []string{"quota", "level"}),
		agent: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "toolhost_governor_agent_used",
			Help: "Cost granted per agent (governor.acquire's agent, a tool call's caller) over a quota's throttle window, from governor.state; at most [governor] max_agents names per quota, the rest under agent=\"other\".",
		}, []string{"quota", "agent"}),
		agents: make(map[string]map[string]bool),
	}
	m.reg.MustRegister(m.calls, m.attempts, m.retries, m.duration, m.breaker, m.dropped, m.quota, m.agent,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	if g.InFlight != nil {
		m.reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "toolhost_instances_in_flight", Help: "Guest instances running a call now.",
		}, g.InFlight))
	}
	if g.CacheHits != nil && g.CacheMisses != nil {
		m.reg.MustRegister(
			prometheus.NewCounterFunc(prometheus.CounterOpts{
				Name: "toolhost_compile_cache_hits_total", Help: "Module loads served by the compilation cache.",
			}, g.CacheHits),
			prometheus.NewCounterFunc(prometheus.CounterOpts{
				Name: "toolhost_compile_cache_misses_total", Help: "Module loads the compilation cache could not serve (compiled).",
			}, g.CacheMisses))
	}
	if g.Tools != nil {
		m.reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "toolhost_tools", Help: "Tools served.",
		}, g.Tools))
	}
	return m
}

// Registry is the underlying Prometheus registry, to add collectors.
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// Handler serves the metrics in the Prometheus text format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{})
}

// Follow counts bus events until ctx ends or the bus closes its
// subscribers. It observes the bus (see events.Bus.Observe) rather than
// subscribing: the counters are updated on the publisher's goroutine, in
// order, and none is missed.
func (m *Metrics) Follow(ctx context.Context, bus *events.Bus) {
	sub := bus.Observe(m.observe, "dispatch.", "breaker.", "governor.")
	defer sub.Close()
	select {
	case <-ctx.Done():
	case <-sub.Done():
	}
}

func (m *Metrics) observe(e events.Event) {
	switch d := e.Data.(type) {
	case dispatcher.AttemptEvent:
		m.attempts.WithLabelValues(d.Tool).Inc()
	case dispatcher.RetryEvent:
		m.retries.WithLabelValues(d.Tool, string(d.Reason)).Inc()
	case dispatcher.ResultEvent:
		outcome, tool := "ok", d.Tool
		switch {
		case d.Cancelled:
			// The caller went away: not the tool's error kind.
			outcome = "cancelled"
		case !d.OK:
			outcome = string(d.Kind)
		}
		if d.Kind == dispatcher.KindNotFound {
			// Callers choose these names: one series per made-up name
			// would grow without bound.
			tool = "_unknown"
		}
		m.calls.WithLabelValues(tool, outcome).Inc()
		// Latency is an execution's: refusals (no attempt) and shared
		// outcomes (someone else's execution) would only skew it.
		if d.Attempts > 0 && !d.Shared {
			m.duration.WithLabelValues(d.Tool).Observe(float64(time.Duration(d.DurationMS*float64(time.Millisecond))) / float64(time.Second))
		}
	case dispatcher.BreakerEvent:
		m.breaker.WithLabelValues(d.Tool).Set(breakerLevel(d.To))
	case dispatcher.BreakerRemovedEvent:
		// The tool is no longer served: every series naming it goes, so
		// that series follow the tools loaded, not every name ever seen.
		tool := prometheus.Labels{"tool": d.Tool}
		m.breaker.DeletePartialMatch(tool)
		m.calls.DeletePartialMatch(tool)
		m.attempts.DeletePartialMatch(tool)
		m.retries.DeletePartialMatch(tool)
		m.duration.DeletePartialMatch(tool)
	case governor.State:
		m.quota.WithLabelValues(d.Quota, "used").Set(float64(d.Used))
		m.quota.WithLabelValues(d.Quota, "capacity").Set(float64(d.Capacity))
		m.quota.WithLabelValues(d.Quota, "available").Set(d.Available)
		m.quota.WithLabelValues(d.Quota, "waiting").Set(float64(d.Waiting))
		m.quota.WithLabelValues(d.Quota, "mode").Set(modeLevel(d.Mode))
		if d.Agents != nil {
			m.observeAgents(d.Quota, d.Agents)
		}
	}
}

// observeAgents sets a quota's per-agent series to the state's, and
// deletes the series of agents that left the window: the store bounds the
// agents in one state, and only this keeps the series over time as few.
func (m *Metrics) observeAgents(quota string, agents map[string]governor.AgentUsage) {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := make(map[string]bool, len(agents))
	for name, u := range agents {
		name = governor.CleanAgent(name) // label values must be UTF-8; control characters have no place there
		now[name] = true
		m.agent.WithLabelValues(quota, name).Set(float64(u.Used))
	}
	for name := range m.agents[quota] {
		if !now[name] {
			m.agent.DeleteLabelValues(quota, name)
		}
	}
	m.agents[quota] = now
}

func modeLevel(m governor.Mode) float64 {
	switch m {
	case governor.ModeThrottled:
		return 1
	case governor.ModeBlocked:
		return 2
	}
	return 0
}

func breakerLevel(state string) float64 {
	switch state {
	case "half_open":
		return 1
	case "open":
		return 2
	}
	return 0
}
