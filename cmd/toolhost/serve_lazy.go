package main

import (
	"fmt"
	"runtime"

	"github.com/spf13/cobra"
	"github.com/toolhost/toolhost/host"
)

// lazyFlags are serve's flags for when modules' code is compiled and kept,
// and how many fresh instances run at once.
type lazyFlags struct {
	lazy        bool
	warmUp      bool
	maxResident int
	maxFresh    int
}

func (l *lazyFlags) register(cmd *cobra.Command) {
	fs := cmd.Flags()
	fs.BoolVar(&l.lazy, "lazy", false, "list modules described before from the describe cache without compiling them; each compiles in the background (--warm-up) or on its first call, which waits for it under the tool's timeout")
	fs.BoolVar(&l.warmUp, "warm-up", true, "with --lazy, compile the modules listed from the describe cache in the background after the start, so most first calls find them ready")
	fs.IntVar(&l.maxFresh, "max-fresh", 4*runtime.GOMAXPROCS(0), "most fresh instances made and run at once; more calls queue under their deadline (0: no bound). Near the CPU count keeps latency and memory bounded when the CPU is saturated")
	fs.IntVar(&l.maxResident, "max-resident", 0, "most modules whose compiled code stays in memory; idle ones past it are released and compiled again (from the cache) on their next call (0: no limit)")
}

// apply sets the flags' fields of the host's config.
func (l *lazyFlags) apply(c *host.Config) {
	c.Lazy, c.WarmUp, c.MaxResident, c.MaxFresh = l.lazy, l.warmUp, l.maxResident, l.maxFresh
}

// readyNote adds the modules compiling on demand to what /readyz says
// beside "ready": a replica whose first calls wait on a compile is
// serving, and says why those calls are slow.
func readyNote(degraded func() string, rt *host.Runtime) func() string {
	return func() string {
		msg := degraded()
		if s := rt.ModuleStats(); s.Compiling+s.WarmQueued > 0 {
			if msg == "" {
				msg = "ready"
			}
			msg += fmt.Sprintf("; %d modules compiling, %d queued to (their calls wait for it)", s.Compiling, s.WarmQueued)
		}
		return msg
	}
}
