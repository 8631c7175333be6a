package host

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/toolhost/toolhost/abi"
	"github.com/toolhost/toolhost/host/internal/resident"
	"github.com/toolhost/toolhost/third_party/wazero"
)

// A module's compiled code may be absent: not compiled yet (the module was
// listed from the describe cache or its manifest section) or released
// under Config.MaxResident. host/internal/resident keeps it (resident.Code)
// and the runtime's bound (resident.Set); what is left here is how a
// module compiles again.

// acquireCode returns the module's compiled code, compiling it first if it
// is not resident, and counts a user until releaseCode. Waiting for the
// compile ends with ctx (the caller's deadline); the compile itself goes
// on for the calls after it.
func (m *Module) acquireCode(ctx context.Context) (wazero.CompiledModule, error) {
	return m.code.Acquire(ctx)
}

// releaseCode ends a use acquireCode counted.
func (m *Module) releaseCode() { m.code.Release() }

// newCode gives m its code: compiled (nil: compiled on its first call).
func (m *Module) newCode(compiled wazero.CompiledModule) {
	m.code = m.rt.residents.Code(compiled, m.compileOnDemand)
	if m.rt.cfg.Snapshot[moduleName(m.Path)] {
		m.snap = &moduleSnapshot{}
	}
	m.mem.OnIdle(m.idle)
}

// idle lets go of what a module idle past the memory pool's idle time
// holds besides its pooled memory: its code pages and its snapshot.
func (m *Module) idle() {
	m.releaseCodePages()
	m.snap.drop()
}

// releaseCodePages lets the module's machine code leave the process's
// memory until it next runs: after the instance that described it at load
// and once it has been idle past the memory pool's idle time. On Linux
// code loaded from the compilation cache is mapped from the cache file,
// and one run maps nearly all of it (ext4 maps whole large folios per
// fault), so without this every module that ran once kept its ~14 MiB
// resident. The pages stay in the page cache: the next call maps them
// again with minor faults. Code compiled in the process stays as it is.
func (m *Module) releaseCodePages() {
	if c := m.code.Compiled(); c != nil {
		wazero.ReleaseCodePages(c)
	}
}

// compileOnDemand compiles the module from its file for a call that found
// its code absent, and says so in the log.
func (m *Module) compileOnDemand(ctx context.Context) (wazero.CompiledModule, error) {
	start := time.Now()
	compiled, err := m.recompile(ctx)
	if m.Unverified() && err != nil {
		err = claimVerdict(ctx, m, err)
	}
	if err != nil {
		switch {
		case errors.Is(context.Cause(ctx), resident.ErrYielded):
			// A background compile (the warm-up, a manifest check) that
			// gave the CPUs to a call's: it runs again once no call waits
			// for a compile.
			m.rt.logger.Debug("a background compile stopped for a call's compile; it starts again after it", "file", m.Path)
		case ctx.Err() != nil:
			// ctx is the resident set's lifetime: it ends when the runtime
			// closes, so this compile was stopped by the shutdown, not failed.
			// A warning here would greet every stop during a lazy start.
			m.rt.logger.Debug("compiling a module on demand stopped: the runtime is closing", "file", m.Path, "err", err)
		default:
			m.rt.logger.Warn("compiling a module on demand failed", "file", m.Path, "err", err)
		}
		return nil, err
	}
	m.rt.logger.Info("module compiled on demand", "file", m.Path, "took", time.Since(start))
	return compiled, nil
}

// refusesForGood: a module whose manifest section its code contradicts
// never compiles for a call.
func refusesForGood(err error) bool {
	var ce *ClaimError
	return errors.As(err, &ce)
}

// recompile reads the module's file again and compiles it, through the
// same checks as at load. The file must still hold the bytes the module
// was listed with: a changed file is a reload's business, and until it
// lands the call is told to try again. A compiled module that contradicts
// the describe cache entry it was listed from drops the entry.
func (m *Module) recompile(ctx context.Context) (wazero.CompiledModule, error) {
	wasm, err := ReadModuleFile(m.Path)
	if err != nil {
		return nil, &abi.Error{Kind: abi.KindTransient, Message: fmt.Sprintf("module %s cannot be read to compile it: %v", m.Path, err)}
	}
	sum, err := m.sameBytes(wasm)
	if err != nil {
		return nil, err
	}
	fresh, err := m.rt.compile(ctx, m.Path, wasm, sum, wantExports, "")
	if err == nil {
		// m was listed without its bytes (a describe cache entry, its
		// section): its pool learns what the data segments write now.
		m.mem.SetWritten(fresh.mem.Written())
	}
	if err == nil && m.Unverified() {
		// Listed from its toolhost.manifest section: the section is
		// checked before any call runs the code.
		if err := m.verifyClaim(ctx, fresh); err != nil {
			_ = fresh.code.Compiled().Close(ctx)
			return nil, err
		}
		return fresh.code.Compiled(), nil
	}
	if err != nil {
		// A compile cut short (the runtime closing: a restart during the
		// warm-up) says nothing against the entry; keeping it is what
		// lets the next start list the module at once.
		if ctx.Err() == nil {
			m.rt.dropDescribe(m.SHA256)
		}
		return nil, err
	}
	if !m.sameFacts(fresh) {
		_ = fresh.code.Compiled().Close(ctx)
		m.rt.dropDescribe(m.SHA256)
		return nil, &Fault{Module: m.Path, Reason: "the compiled module does not match its describe cache entry (entry deleted; it is described again on the next load)"}
	}
	return fresh.code.Compiled(), nil
}

// sameBytes returns the sha256 of wasm, read from m's file again, or a
// transient error when the file no longer holds the bytes m was listed
// with: a changed file is a reload's business, and until it lands the
// call is told to try again.
func (m *Module) sameBytes(wasm []byte) ([sha256.Size]byte, error) {
	sum := sha256.Sum256(wasm)
	if hex.EncodeToString(sum[:]) != m.SHA256 {
		return sum, &abi.Error{Kind: abi.KindTransient, Message: fmt.Sprintf("module %s changed on disk since it was loaded; call again once it reloads", m.Path)}
	}
	return sum, nil
}

// sameFacts reports whether fresh, m's file compiled again, has the facts
// m was listed with.
func (m *Module) sameFacts(fresh *Module) bool {
	return fresh.minBytes == m.minBytes && fresh.egress == m.egress && fresh.notes == m.notes && fresh.hasInit == m.hasInit &&
		sameExtism(fresh.ext, m.ext)
}

// ModuleStats is what the runtime has done with its modules' code.
type ModuleStats struct {
	// Compiles counts modules compiled (from the file cache or afresh),
	// at load and on demand.
	Compiles uint64
	// DescribeHits counts loads served by the describe cache, which
	// compile nothing.
	DescribeHits uint64
	// Compiling is how many modules are compiling now (on demand or
	// warming up), and WarmQueued how many wait to warm up.
	Compiling, WarmQueued int64
	// Resident is how many tool modules have compiled code in memory.
	Resident int
	// Released counts compiled code released under Config.MaxResident.
	Released uint64
	// Interpreted counts the interpreted forms made (Config.Interpret):
	// modules whose calls ran on the interpreter while they compiled.
	Interpreted uint64
	// ListedInterpreted counts cold modules without a manifest section
	// listed from their describe on the interpreter, uncompiled
	// (Config.Interpret).
	ListedInterpreted uint64
}

// ModuleStats returns the runtime's counts so far.
func (r *Runtime) ModuleStats() ModuleStats {
	s := r.residents.Stats()
	return ModuleStats{Compiles: r.compiles.Load(), DescribeHits: r.describeHits.Load(),
		Compiling: s.Compiling, WarmQueued: s.Queued, Resident: s.Resident, Released: s.Released,
		Interpreted: r.interpForms.Load(), ListedInterpreted: r.interpListed.Load()}
}

// Resident reports whether the module's compiled code is in memory.
func (m *Module) Resident() bool { return m.code.Resident() }
