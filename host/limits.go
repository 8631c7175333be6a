package host

import "github.com/toolhost/toolhost/internal/hostconf"

// Limits bound what one call may use (hostconf.Limits: the config file
// checker fills it in without linking WebAssembly).
type Limits = hostconf.Limits

// limitsWithDefaults fills l's zero fields from base, then from the
// package defaults.
func limitsWithDefaults(l, base Limits) Limits {
	if l.MemoryBytes == 0 {
		l.MemoryBytes = base.MemoryBytes
	}
	if l.OutputBytes == 0 {
		l.OutputBytes = base.OutputBytes
	}
	if l.LogBytes == 0 {
		l.LogBytes = base.LogBytes
	}
	if l.MemoryBytes == 0 {
		l.MemoryBytes = DefaultMemoryLimit
	}
	if l.OutputBytes == 0 {
		l.OutputBytes = DefaultOutputLimit
	}
	if l.LogBytes == 0 {
		l.LogBytes = DefaultLogLimit
	}
	return l
}

// EffectiveLimits returns lim with every zero field filled from the
// runtime's configuration and the package defaults: the limits a call with
// lim actually runs under.
func (m *Module) EffectiveLimits(lim Limits) Limits {
	return limitsWithDefaults(lim, m.rt.cfg.Limits)
}
