package host

// Limits bound what one call may use. A zero field means "inherit": from the
// Runtime's Config, then from the package defaults.
type Limits struct {
	// MemoryBytes caps the instance's linear memory; memory.grow past it
	// fails inside the guest (a Go guest then dies with "out of memory",
	// which the caller sees as an internal error).
	MemoryBytes uint64
	// OutputBytes caps the response JSON; a larger response is an internal
	// error, not a truncated result.
	OutputBytes uint32
	// LogBytes caps what the guest may write to stdout and stderr in one
	// call. What fits is logged as one line; the rest is counted and
	// dropped.
	LogBytes int
}

func (l Limits) withDefaults(base Limits) Limits {
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
	return lim.withDefaults(m.rt.cfg.Limits)
}
