package server

import (
	"context"
	"slices"

	"github.com/toolhost/toolhost/access"
	"github.com/toolhost/toolhost/breaker"
	"github.com/toolhost/toolhost/dispatcher"
	"github.com/toolhost/toolhost/events"
	"github.com/toolhost/toolhost/governor"
	"github.com/toolhost/toolhost/host"
	"github.com/toolhost/toolhost/internal/console"
	"github.com/toolhost/toolhost/loader"
	"github.com/toolhost/toolhost/transport"
)

// consoleOptions is what the console at /ui reads from: the loader's
// files and registry, the runtime's warm pools, the dispatcher's
// breakers, the governor's quotas, the MCP server's running tasks and the
// event bus, under the server's access policy and --operator list
// (buildHTTP adds its authentication).
func consoleOptions(s Settings, rt *host.Runtime, live *loader.Live, d *dispatcher.Dispatcher, gov *governor.Governor, srv *transport.Server, bus *events.Bus, policy *access.Policy) console.Options {
	return console.Options{
		Sources: console.Sources{
			Files: live.Files,
			Tools: live.Registry,
			Pools: func() []console.Pool {
				stats := rt.PoolStats()
				out := make([]console.Pool, len(stats))
				for i, s := range stats {
					out[i] = console.Pool{Tool: s.Tool, Idle: s.Idle, Busy: s.Busy, Warming: s.Warming, Callers: s.Callers}
				}
				return out
			},
			Breakers: func() []breaker.Status { return d.Breakers() },
			Quotas:   func(ctx context.Context) []governor.State { return gov.Status(ctx) },
			Tasks: func() []console.Task {
				running := srv.RunningTasks()
				out := make([]console.Task, len(running))
				for i, t := range running {
					out[i] = console.Task{ID: t.ID, Caller: t.Caller, Tool: t.Tool, Started: t.Started, Note: t.Note}
				}
				return out
			},
			Events: bus,
		},
		Access:   policy,
		Operator: func(id string) bool { return slices.Contains(s.Operators, id) },
		Version:  s.Version,
	}
}
