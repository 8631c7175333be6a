// Package snapshot starts instances of a module from a copy of one
// instance's state after its start functions, the way Wizer does ahead of
// time, so that each new instance skips running them. It is toolhost's
// patch, not wazero's.
//
// A snapshot is the instance's memory (its non-zero blocks), the globals
// the module defines and which passive segments were dropped. Tables and
// WASI state are not copied: Take refuses an instance whose start
// functions changed its tables or its open files, and a restored instance
// rebuilds them from the module and its own config. Whatever else the
// start functions computed is in the memory, randomness drawn from the
// host included: every restored instance starts with the same values.
package snapshot

import (
	"context"

	"github.com/toolhost/toolhost/third_party/wazero/api"
	"github.com/toolhost/toolhost/third_party/wazero/internal/expctxkeys"
	"github.com/toolhost/toolhost/third_party/wazero/internal/wasm"
)

// ErrUnsupported wraps every reason Take refuses an instance.
var ErrUnsupported = wasm.ErrSnapshotUnsupported

// Snapshot is one instance's state after its start functions. It is
// immutable and safe for concurrent use.
type Snapshot struct{ s *wasm.InstanceSnapshot }

// Prepare returns a context for Runtime.InstantiateModule whose instance
// Take may copy.
func Prepare(ctx context.Context) context.Context {
	return context.WithValue(ctx, expctxkeys.SnapshotPrepareKey{}, struct{}{})
}

// Take copies mod's state. mod must have been instantiated with a Prepare
// context, and no guest code but its start functions may have run in it:
// Take cannot tell what a call changed. The error wraps ErrUnsupported
// when the instance cannot be restored faithfully.
func Take(mod api.Module) (*Snapshot, error) {
	m, ok := mod.(*wasm.ModuleInstance)
	if !ok {
		return nil, ErrUnsupported
	}
	s, err := m.TakeSnapshot()
	if err != nil {
		return nil, err
	}
	return &Snapshot{s}, nil
}

// Restore returns a context for Runtime.InstantiateModule that gives the
// instance s's state instead of applying its data segments and running its
// start section and the config's start functions. The module must be the
// one s was taken of (the same bytes); its memory allocator, if any, must
// hand out zeroed memory, as the specification requires.
func Restore(ctx context.Context, s *Snapshot) context.Context {
	return context.WithValue(ctx, expctxkeys.SnapshotRestoreKey{}, &wasm.SnapshotRestore{Snapshot: s.s})
}

// RestoreOver is Restore for a memory allocator that may hand out memory
// holding anything below the snapshot's length (MemoryPages): the restore
// writes every byte there, zeros included, before any guest code can run,
// so such an allocator need not clear what the restore overwrites. Past
// that length the allocator's memory must be zero, as for Restore.
func RestoreOver(ctx context.Context, s *Snapshot) context.Context {
	return context.WithValue(ctx, expctxkeys.SnapshotRestoreKey{}, &wasm.SnapshotRestore{Snapshot: s.s, Over: true})
}

// MemoryBytes is how many bytes of memory s holds (its non-zero blocks).
func (s *Snapshot) MemoryBytes() int { return s.s.Held() }

// MemoryPages is the length of memory s restores, in 64 KiB pages: the
// memory's length after the start functions.
func (s *Snapshot) MemoryPages() uint32 { return s.s.Pages() }
