package server

import (
	"github.com/toolhost/toolhost/abi"
	"github.com/toolhost/toolhost/host"
	"github.com/toolhost/toolhost/internal/metrics"
	"github.com/toolhost/toolhost/loader"
	"github.com/toolhost/toolhost/transport"
)

// instanceMetrics reports the runtime's warm instances and each served
// tool's instance mode on /metrics.
func instanceMetrics(rt *host.Runtime, live *loader.Live) metrics.Instances {
	return metrics.Instances{
		Pools: func() []metrics.Pool {
			stats := rt.PoolStats()
			out := make([]metrics.Pool, len(stats))
			for i, s := range stats {
				out[i] = metrics.Pool{Tool: s.Tool, Idle: s.Idle, Busy: s.Busy, Warming: s.Warming, Callers: s.Callers}
			}
			return out
		},
		Retired: rt.RetiredInstances,
		Modes: func() map[string]string {
			tools := live.Registry().List()
			out := make(map[string]string, len(tools))
			for _, t := range tools {
				out[t.Name] = "fresh"
				if t.Instances == abi.InstancesReuse {
					out[t.Name] = "reuse"
				}
			}
			return out
		},
	}
}

// warmListMeta gives each tools/list the tools' warm-instance pools, all
// callers and module versions of a tool together, for toolhost list.
func warmListMeta(rt *host.Runtime) func() map[string]map[string]any {
	return func() map[string]map[string]any {
		sum := map[string]*host.PoolStats{}
		for _, s := range rt.PoolStats() {
			t := sum[s.Tool]
			if t == nil {
				t = &host.PoolStats{Tool: s.Tool}
				sum[s.Tool] = t
			}
			t.Idle += s.Idle
			t.Busy += s.Busy
			t.Warming += s.Warming
			t.Callers += s.Callers
		}
		out := make(map[string]map[string]any, len(sum))
		for name, t := range sum {
			out[name] = map[string]any{transport.MetaToolWarm: map[string]int{
				"idle": t.Idle, "busy": t.Busy, "warming": t.Warming, "callers": t.Callers}}
		}
		return out
	}
}
