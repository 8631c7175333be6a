package host

import (
	"slices"
	"strings"
	"time"

	"github.com/toolhost/toolhost/abi"
	"github.com/toolhost/toolhost/host/internal/warm"
	"github.com/toolhost/toolhost/internal/hostconf"
)

// Defaults for Reuse fields left at zero.
const (
	DefaultReuseMaxPerTool  = 8
	DefaultReuseMaxTotal    = 64
	DefaultReuseMaxUses     = 1000
	DefaultReuseIdleTimeout = 60 * time.Second
	DefaultReuseMemoryMark  = 32 << 20
)

// Reuse configures warm instances (hostconf.Reuse: the config file
// checker fills it in without linking WebAssembly).
type Reuse = hostconf.Reuse

// reuseWithDefaults fills c's zero bounds with the package defaults.
func reuseWithDefaults(c Reuse) Reuse {
	if c.MaxPerTool <= 0 {
		c.MaxPerTool = DefaultReuseMaxPerTool
	}
	if c.MaxTotal <= 0 {
		c.MaxTotal = DefaultReuseMaxTotal
	}
	if c.MaxUses <= 0 {
		c.MaxUses = DefaultReuseMaxUses
	}
	if c.IdleTimeout <= 0 {
		c.IdleTimeout = DefaultReuseIdleTimeout
	}
	if c.MemoryHighWater == 0 {
		c.MemoryHighWater = DefaultReuseMemoryMark
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	return c
}

// Why a warm instance was retired: the reason label of RetiredInstances.
const (
	RetiredError   = warm.RetiredError   // the call failed (any kind but schema), trapped or broke the ABI
	RetiredStopped = warm.RetiredStopped // the call's deadline passed or it was cancelled
	RetiredUses    = warm.RetiredUses    // Reuse.MaxUses calls
	RetiredIdle    = warm.RetiredIdle    // Reuse.IdleTimeout without a call
	RetiredMemory  = warm.RetiredMemory  // linear memory past Reuse.MemoryHighWater
	RetiredEvicted = warm.RetiredEvicted // made room for another caller or tool under the bounds
	RetiredClosed  = warm.RetiredClosed  // its module was replaced (hot reload) or closed
)

// PoolStats are one tool's warm instances at a moment.
type PoolStats struct {
	// Tool is the tool's name; Module the file of the module version
	// serving it (a replaced version drains under its own row).
	Tool, Module string
	// Idle instances wait for their caller's next call; Busy ones run a
	// call; Warming ones are being instantiated off the request path.
	Idle, Busy, Warming int
	// Callers is the number of callers with a pool of the tool.
	Callers int
}

// PoolStats returns every tool's warm instances, by tool and module.
func (r *Runtime) PoolStats() []PoolStats {
	stats := r.warm.Stats()
	out := make([]PoolStats, 0, len(stats))
	for _, s := range stats {
		out = append(out, PoolStats{Tool: s.Tool, Module: s.Mod.Path, Idle: s.Idle, Busy: s.Busy, Warming: s.Warming, Callers: s.Callers})
	}
	slices.SortFunc(out, func(a, b PoolStats) int {
		if c := strings.Compare(a.Tool, b.Tool); c != 0 {
			return c
		}
		return strings.Compare(a.Module, b.Module)
	})
	return out
}

// RetiredInstances counts the warm instances retired since New, by reason
// (the Retired* constants).
func (r *Runtime) RetiredInstances() map[string]uint64 { return r.warm.Retired() }

// ReuseOff reports whether reuse is off everywhere (Reuse.Off).
func (r *Runtime) ReuseOff() bool { return r.warm.Off() }

// Reusable reports whether a call of tool may run in a warm instance when
// the operator allows it: its manifest says "instances": "reuse" and reuse
// is not off in the runtime.
func (m *Module) Reusable(tool string) bool {
	if m.rt.warm.Off() {
		return false
	}
	for i := range m.Tools {
		if m.Tools[i].Name == tool {
			return m.Tools[i].Instances == abi.InstancesReuse
		}
	}
	return false
}
