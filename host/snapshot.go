package host

import (
	"context"
	"log/slog"
	"sync/atomic"

	"github.com/toolhost/toolhost/imports/toolhostv1"
	"github.com/toolhost/toolhost/third_party/wazero"
	"github.com/toolhost/toolhost/third_party/wazero/experimental"
	"github.com/toolhost/toolhost/third_party/wazero/experimental/snapshot"
)

// moduleSnapshot starts a module's instances from a copy of its state
// after _initialize, for a module the operator named in Config.Snapshot,
// so that they do not run _initialize: most of a fresh Go call's cost
// (docs/BENCHMARKS.md). It is off by default because every instance then
// starts with the randomness _initialize drew: a Go guest's math/rand
// sequence, map seeds and hash seeds repeat from call to call
// (docs/RATIONALE.md). crypto/rand still reads the host's randomness.
//
// The snapshot is made in an instance of its own that never serves a
// call: _initialize runs there as at load, egress refused and output
// dropped, so no call's arguments, output or responses can be in it. It is
// made when an instance is first needed, and dropped when the module
// falls idle (and after load), so an idle module holds none of it.
type moduleSnapshot struct {
	cur     atomic.Pointer[snapshot.Snapshot]
	making  atomic.Bool // an instance is making cur
	refused atomic.Bool // the module cannot be restored faithfully: never again
	told    atomic.Bool // the first snapshot was logged at info
}

// instantiating returns the context a new instance of m, capped at
// lim.MemoryBytes, is instantiated with: its memory from the module's pool
// and, for a module with a snapshot, the snapshot to restore, made first if
// there is none and no other instance is making it. The instance runs
// _initialize instead when the module has no snapshot or cannot have one,
// when another instance is making it, or when the snapshot's memory is
// over lim.
func (s *moduleSnapshot) instantiating(ctx context.Context, m *Module, compiled wazero.CompiledModule, lim Limits) context.Context {
	if snap := s.current(ctx, m, compiled, lim); snap != nil {
		// A tool given less memory than the module had after _initialize
		// starts as it would without a snapshot, and fails there if it
		// must.
		if image := uint64(snap.MemoryPages()) * wasmPage; image <= lim.MemoryBytes {
			// The restore writes all of the snapshot's memory, zeros
			// included, so the pool clears only what lies past it.
			return snapshot.RestoreOver(experimental.WithMemoryAllocator(ctx, m.mem.AllocatorOver(lim.MemoryBytes, image)), snap)
		}
	}
	return experimental.WithMemoryAllocator(ctx, m.mem.Allocator(lim.MemoryBytes))
}

// current returns the module's snapshot, made first (for an instance
// capped at lim) if there is none and no other instance is making it, or
// nil (see instantiating). s may be nil: the module has none.
func (s *moduleSnapshot) current(ctx context.Context, m *Module, compiled wazero.CompiledModule, lim Limits) *snapshot.Snapshot {
	if s == nil {
		return nil
	}
	if snap := s.cur.Load(); snap != nil {
		return snap
	}
	if s.refused.Load() || !s.making.CompareAndSwap(false, true) {
		return nil
	}
	defer s.making.Store(false)
	return s.make(ctx, m, compiled, lim)
}

// wasmPage is WebAssembly's page size.
const wasmPage = 65536

// make runs _initialize in an instance that serves no call, with the
// memory limit of the instance it is made for (so that instance can hold
// it), and takes the snapshot from it. A failure there returns nil: the
// caller's instance then runs _initialize itself and reports the failure
// with the guest's output, which this instance drops.
func (s *moduleSnapshot) make(ctx context.Context, m *Module, compiled wazero.CompiledModule, lim Limits) *snapshot.Snapshot {
	ctx = toolhostv1.WithCall(ctx, toolhostv1.Loading(moduleName(m.Path)))
	actx := snapshot.Prepare(experimental.WithMemoryAllocator(ctx, m.mem.Allocator(lim.MemoryBytes)))
	cfg := baseConfig.WithNanosleep(sleeper(ctx)).WithStdout(discard{}).WithStderr(discard{})
	mod, err := m.rt.rt.InstantiateModule(actx, compiled, cfg)
	if err != nil {
		return nil
	}
	defer func() { _ = mod.Close(context.Background()) }()
	snap, err := snapshot.Take(mod)
	if err != nil {
		s.refused.Store(true)
		m.rt.logger.Warn("this module's instances cannot start from a snapshot, so each runs _initialize",
			"module", m.Path, "err", err)
		return nil
	}
	// The first says the operator's option took effect; the ones after
	// each idle spell say nothing new.
	level := slog.LevelDebug
	if s.told.CompareAndSwap(false, true) {
		level = slog.LevelInfo
	}
	m.rt.logger.Log(ctx, level, "took a snapshot of a module after _initialize: its instances start from it",
		"module", m.Path, "memory_bytes", snap.MemoryBytes(), "memory_pages", snap.MemoryPages())
	s.cur.Store(snap)
	return snap
}

// drop lets go of the snapshot; the next instance makes it again.
func (s *moduleSnapshot) drop() {
	if s != nil {
		s.cur.Store(nil)
	}
}
