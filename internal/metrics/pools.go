package metrics

import (
	"maps"
	"slices"

	"github.com/prometheus/client_golang/prometheus"
)

// Pool is one tool's warm instances at a scrape (see host.PoolStats).
type Pool struct {
	Tool                         string
	Idle, Busy, Warming, Callers int
}

// Instances reads the warm-instance state at each scrape. Each field must
// be safe to call from any goroutine; nil fields are left out.
type Instances struct {
	// Pools lists the tools with warm instances; rows of one tool (a
	// replaced module version draining) are added up.
	Pools func() []Pool
	// Retired counts the warm instances retired, by reason.
	Retired func() map[string]uint64
	// Modes maps each tool served to its instance mode in force, "fresh"
	// or "reuse".
	Modes func() map[string]string
}

var (
	warmDesc = prometheus.NewDesc("toolhost_warm_instances",
		"Warm instances per tool, all callers together, by state: idle, busy (in a call) or warming (being made off the request path).",
		[]string{"tool", "state"}, nil)
	callersDesc = prometheus.NewDesc("toolhost_warm_pools",
		"Callers with a pool of warm instances of the tool.", []string{"tool"}, nil)
	retiredDesc = prometheus.NewDesc("toolhost_warm_retired_total",
		"Warm instances retired, by reason: error, stopped (timeout or cancellation), uses, idle, memory, evicted, closed (module replaced).",
		[]string{"reason"}, nil)
	modeDesc = prometheus.NewDesc("toolhost_tool_instances",
		"1 for each tool and the instance mode in force for it: fresh (a new instance per call) or reuse (warm instances per caller).",
		[]string{"tool", "mode"}, nil)
)

// Describe implements prometheus.Collector.
func (in Instances) Describe(ch chan<- *prometheus.Desc) {
	ch <- warmDesc
	ch <- callersDesc
	ch <- retiredDesc
	ch <- modeDesc
}

// Collect implements prometheus.Collector.
func (in Instances) Collect(ch chan<- prometheus.Metric) {
	if in.Pools != nil {
		sum := map[string]*Pool{}
		for _, p := range in.Pools() {
			s := sum[p.Tool]
			if s == nil {
				s = &Pool{Tool: p.Tool}
				sum[p.Tool] = s
			}
			s.Idle += p.Idle
			s.Busy += p.Busy
			s.Warming += p.Warming
			s.Callers += p.Callers
		}
		for _, tool := range slices.Sorted(maps.Keys(sum)) {
			s := sum[tool]
			ch <- prometheus.MustNewConstMetric(warmDesc, prometheus.GaugeValue, float64(s.Idle), tool, "idle")
			ch <- prometheus.MustNewConstMetric(warmDesc, prometheus.GaugeValue, float64(s.Busy), tool, "busy")
			ch <- prometheus.MustNewConstMetric(warmDesc, prometheus.GaugeValue, float64(s.Warming), tool, "warming")
			ch <- prometheus.MustNewConstMetric(callersDesc, prometheus.GaugeValue, float64(s.Callers), tool)
		}
	}
	if in.Retired != nil {
		for reason, n := range in.Retired() {
			ch <- prometheus.MustNewConstMetric(retiredDesc, prometheus.CounterValue, float64(n), reason)
		}
	}
	if in.Modes != nil {
		for tool, mode := range in.Modes() {
			ch <- prometheus.MustNewConstMetric(modeDesc, prometheus.GaugeValue, 1, tool, mode)
		}
	}
}
