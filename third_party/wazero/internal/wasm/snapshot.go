package wasm

import (
	"bytes"
	"errors"
	"fmt"
	"slices"

	internalsys "github.com/toolhost/toolhost/third_party/wazero/internal/sys"
)

// This file is toolhost's patch: an instance can be started from a copy of
// another instance's state after its start functions (a Wizer-style
// snapshot), which skips running them. See experimental/snapshot.

// InstanceSnapshot is the state of a module instance after its start
// functions: its memory, its own globals and which passive segments it
// dropped. It is immutable once taken and safe to restore from many
// goroutines at once.
type InstanceSnapshot struct {
	moduleID ModuleID
	pages    uint32      // the memory's length, in pages
	runs     []memoryRun // the memory's non-zero bytes; the rest is zero
	held     int         // bytes of memory the runs hold
	globals  []uint64    // lo, hi of each global the module defines
	// dataDropped and elemDropped mark the segments the start functions
	// dropped (data.drop, elem.drop).
	dataDropped, elemDropped []bool
}

// SnapshotRestore is the value of expctxkeys.SnapshotRestoreKey: the
// snapshot an instance is restored from, and whether its memory allocator
// may hand out memory holding anything below the snapshot's length (Over),
// in which case the restore writes every byte there, zeros included.
type SnapshotRestore struct {
	Snapshot *InstanceSnapshot
	Over     bool
}

// memoryRun is a stretch of memory at offset, a multiple of snapshotBlock.
type memoryRun struct {
	offset uint32
	data   []byte
}

// snapshotBlock is the granularity at which zero memory is left out of a
// snapshot: a page of the host's, so that the copy a restore makes touches
// no page the snapshot has nothing for.
const snapshotBlock = 4096

// snapshotBase is what an instance made for a snapshot had when it was
// instantiated, before its start functions ran: Take refuses an instance
// whose start functions changed it, as a restore rebuilds it from the
// module instead of copying it.
type snapshotBase struct {
	tables [][]Reference
	files  []openFile
}

// openFile is a file descriptor and its entry: an entry's identity says
// the descriptor was not closed and opened again.
type openFile struct {
	fd    int32
	entry *internalsys.FileEntry
}

// ErrSnapshotUnsupported wraps every reason Take refuses an instance.
var ErrSnapshotUnsupported = errors.New("cannot snapshot the instance")

func unsupported(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrSnapshotUnsupported, fmt.Sprintf(format, args...))
}

// prepareSnapshot records what Take will need unchanged; instantiate calls
// it once the tables are built and before any guest code runs.
func (m *ModuleInstance) prepareSnapshot() {
	b := &snapshotBase{tables: make([][]Reference, len(m.Tables))}
	for i, t := range m.Tables {
		b.tables[i] = slices.Clone(t.References)
	}
	b.files = openFiles(m.Sys)
	m.snapBase = b
}

func openFiles(sysCtx *internalsys.Context) []openFile {
	if sysCtx == nil {
		return nil
	}
	var out []openFile
	sysCtx.FS().RangeFiles(func(fd int32, e *internalsys.FileEntry) bool {
		out = append(out, openFile{fd, e})
		return true
	})
	return out
}

// TakeSnapshot copies the instance's state. The instance must have been
// instantiated for a snapshot and have run no guest code but its start
// functions: nothing here can tell what a later call changed.
func (m *ModuleInstance) TakeSnapshot() (*InstanceSnapshot, error) {
	b := m.snapBase
	switch {
	case b == nil:
		return nil, unsupported("it was not instantiated for one")
	case m.Closed.Load() != 0:
		return nil, unsupported("it is closed")
	case m.Source.ImportMemoryCount > 0:
		return nil, unsupported("its memory is imported")
	case m.MemoryInstance != nil && m.MemoryInstance.Shared:
		return nil, unsupported("its memory is shared")
	}
	for i, g := range m.Globals[:m.Source.ImportGlobalCount] {
		if g.Type.Mutable {
			return nil, unsupported("it imports mutable global %d", i)
		}
	}
	for i, t := range m.Tables {
		if !slices.Equal(t.References, b.tables[i]) {
			return nil, unsupported("its start functions changed table %d", i)
		}
	}
	if !slices.Equal(openFiles(m.Sys), b.files) {
		return nil, unsupported("its start functions opened or closed files")
	}
	s := &InstanceSnapshot{moduleID: m.Source.ID}
	for _, g := range m.Globals[m.Source.ImportGlobalCount:] {
		lo, hi := g.Value()
		s.globals = append(s.globals, lo, hi)
	}
	s.dataDropped = make([]bool, len(m.DataInstances))
	for i, d := range m.DataInstances {
		s.dataDropped[i] = d == nil && m.Source.DataSection[i].Init != nil
	}
	s.elemDropped = make([]bool, len(m.ElementInstances))
	for i, e := range m.ElementInstances {
		s.elemDropped[i] = e == nil && m.Source.ElementSection[i].Mode == ElementModePassive
	}
	if mem := m.MemoryInstance; mem != nil {
		s.pages = mem.Pages()
		s.runs, s.held = nonZeroRuns(mem.Buffer)
	}
	return s, nil
}

// nonZeroRuns copies the blocks of buf that are not all zero, joining
// neighbours into one run, into one allocation.
func nonZeroRuns(buf []byte) ([]memoryRun, int) {
	var zero [snapshotBlock]byte
	type span struct{ from, to int }
	var spans []span
	held := 0
	for off := 0; off < len(buf); off += snapshotBlock {
		end := min(off+snapshotBlock, len(buf))
		if bytes.Equal(buf[off:end], zero[:end-off]) {
			continue
		}
		if n := len(spans); n > 0 && spans[n-1].to == off {
			spans[n-1].to = end
		} else {
			spans = append(spans, span{off, end})
		}
		held += end - off
	}
	all := make([]byte, 0, held)
	runs := make([]memoryRun, len(spans))
	for i, sp := range spans {
		start := len(all)
		all = append(all, buf[sp.from:sp.to]...)
		runs[i] = memoryRun{offset: uint32(sp.from), data: all[start:len(all):len(all)]}
	}
	return runs, held
}

// Held is how many bytes of memory the snapshot holds.
func (s *InstanceSnapshot) Held() int { return s.held }

// Pages is the memory's length the snapshot restores, in pages.
func (s *InstanceSnapshot) Pages() uint32 { return s.pages }

// restoreSnapshot gives a new instance the snapshot's state in place of
// its data segments: instantiate calls it where it would apply them, after
// the globals, memory and element instances are built and before the
// engine's instantiation is done (which reads the globals' values).
func (m *ModuleInstance) restoreSnapshot(r *SnapshotRestore) error {
	s := r.Snapshot
	module := m.Source
	local := m.Globals[module.ImportGlobalCount:]
	switch {
	case s.moduleID != module.ID:
		return errors.New("the snapshot is of another module")
	case len(s.globals) != 2*len(local), len(s.dataDropped) != len(module.DataSection),
		len(s.elemDropped) != len(module.ElementSection):
		return errors.New("the snapshot does not fit the module")
	}
	for i, g := range local {
		// Val, not SetValue: until the engine's instantiation is done the
		// instance's own copy is what it reads.
		g.Val, g.ValHi = s.globals[2*i], s.globals[2*i+1]
	}
	m.DataInstances = make([]DataInstance, len(module.DataSection))
	for i := range module.DataSection {
		if !s.dataDropped[i] {
			m.DataInstances[i] = module.DataSection[i].Init
		}
	}
	for i, dropped := range s.elemDropped {
		if dropped {
			m.ElementInstances[i] = nil
		}
	}
	mem := m.MemoryInstance
	if mem == nil {
		return nil
	}
	if cur := mem.Pages(); s.pages > cur {
		if _, ok := mem.Grow(s.pages - cur); !ok {
			return fmt.Errorf("the snapshot's memory of %d pages is over the instance's limit", s.pages)
		}
	}
	buf := mem.Buffer
	if len(buf) != int(MemoryPagesToBytesNum(s.pages)) {
		return fmt.Errorf("the snapshot's memory is %d pages, the instance's %d", s.pages, mem.Pages())
	}
	if !r.Over {
		// The memory is zero (new, or from an allocator that hands out
		// zeroed buffers), so only the non-zero runs are written.
		for _, run := range s.runs {
			copy(buf[run.offset:], run.data)
		}
		return nil
	}
	// The allocator left what a previous instance wrote: every byte is
	// written, before any guest code can read it.
	at := 0
	for _, run := range s.runs {
		clear(buf[at:run.offset])
		at = int(run.offset) + copy(buf[run.offset:], run.data)
	}
	clear(buf[at:])
	return nil
}
