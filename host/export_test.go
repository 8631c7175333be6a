package host

import "context"

// SweepIdle runs the idle sweeper once, now (it ticks on its own every
// quarter of the idle timeout).
func (r *Runtime) SweepIdle() { r.warm.Sweep() }

// WaitWarming waits for m's instances being warmed in the background.
// Callers must not start calls of m while it waits.
func (m *Module) WaitWarming() { m.rt.warm.WaitWarming(m) }

// CompileChildren counts the compiler children the runtime started.
func (r *Runtime) CompileChildren() uint64 { return r.child.Started() }

// ReleaseCodePages lets the module's code pages go now, as the memory
// pool's idle sweep does (releaseCodePages).
func (m *Module) ReleaseCodePages() { m.releaseCodePages() }

// CompileOnDemand compiles m as a call that found its code absent does.
func (m *Module) CompileOnDemand(ctx context.Context) error {
	_, err := m.compileOnDemand(ctx)
	return err
}

// Idle lets go of what an idle module holds besides its pooled memory, as
// the memory pool's idle sweep does (idle).
func (m *Module) Idle() { m.idle() }

// HoldsSnapshot says whether m holds a snapshot of its state after
// _initialize (Config.Snapshot).
func (m *Module) HoldsSnapshot() bool { return m.snap != nil && m.snap.cur.Load() != nil }

// ForgetDataWrites makes m's pool clear all of every reused buffer again,
// as before it knew what the data segments write (a benchmark's control).
func (m *Module) ForgetDataWrites() { m.mem.SetWritten(nil) }
