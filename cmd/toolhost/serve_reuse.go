package main

import (
	"github.com/toolhost/toolhost/abi"
	"github.com/toolhost/toolhost/host"
	"github.com/toolhost/toolhost/loader"
	"github.com/toolhost/toolhost/metrics"
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
