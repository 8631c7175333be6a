package host

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/toolhost/toolhost/abi"
	"github.com/toolhost/toolhost/third_party/wazero"
)

// code is a module's compiled code, which may be absent: not compiled yet
// (the module was listed from the describe cache) or released under the
// runtime's budget. A call compiles it on demand; calls that arrive while
// it compiles wait for that one compile, each under its own deadline.
type code struct {
	mu       sync.Mutex
	compiled wazero.CompiledModule // nil while not resident
	pending  *compiling            // the compile in progress, or nil
	users    int                   // instances made from compiled not yet closed
	closed   bool                  // Module.Close was called
	refused  error                 // a *ClaimError: the module never compiles for a call
}

// compiling is one on-demand compile; done closes when it ends, and err
// is its outcome.
type compiling struct {
	done chan struct{}
	err  error
}

// errModuleClosed is a call on a module after Close.
var errModuleClosed = errors.New("module closed")

// errRuntimeClosed is a call that would compile after Runtime.Close.
var errRuntimeClosed = errors.New("runtime closed")

// lifetime lets Runtime.Close end the compiles it started on demand, and
// wait for them, before it closes what they compile into.
type lifetime struct {
	ctx    context.Context
	cancel context.CancelFunc
	mu     sync.Mutex
	closed bool
	wg     sync.WaitGroup
}

func newLifetime() lifetime {
	ctx, cancel := context.WithCancel(context.Background())
	return lifetime{ctx: ctx, cancel: cancel}
}

// add counts a compile about to start; false once the runtime is closing.
func (l *lifetime) add() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return false
	}
	l.wg.Add(1)
	return true
}

func (l *lifetime) done() { l.wg.Done() }

// end refuses new compiles, cancels those running (a compiler child is
// killed; wazero compiling in process ends when it ends) and waits.
func (l *lifetime) end() {
	l.mu.Lock()
	l.closed = true
	l.mu.Unlock()
	l.cancel()
	l.wg.Wait()
}

// acquireCode returns the module's compiled code, compiling it first if it
// is not resident, and counts a user until releaseCode. Waiting for the
// compile ends with ctx (the caller's deadline); the compile itself goes
// on for the calls after it.
func (m *Module) acquireCode(ctx context.Context) (wazero.CompiledModule, error) {
	c := &m.code
	for {
		c.mu.Lock()
		if c.closed {
			c.mu.Unlock()
			return nil, errModuleClosed
		}
		if c.refused != nil {
			c.mu.Unlock()
			return nil, c.refused
		}
		if c.compiled != nil {
			c.users++
			compiled := c.compiled
			m.rt.residents.touch(m) // under c.mu: never after Close forgot it
			c.mu.Unlock()
			return compiled, nil
		}
		if err := ctx.Err(); err != nil {
			c.mu.Unlock()
			return nil, err
		}
		p := c.pending
		if p == nil {
			if !m.rt.life.add() {
				c.mu.Unlock()
				return nil, errRuntimeClosed
			}
			p = &compiling{done: make(chan struct{})}
			c.pending = p
			m.rt.compiling.Add(1)
			go m.compileOnDemand(p)
		}
		c.mu.Unlock()
		select {
		case <-p.done:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		if p.err != nil {
			return nil, p.err
		}
	}
}

// releaseCode ends a use acquireCode counted.
func (m *Module) releaseCode() {
	c := &m.code
	c.mu.Lock()
	c.users--
	var drop wazero.CompiledModule
	if c.closed && c.users == 0 && c.compiled != nil {
		drop, c.compiled = c.compiled, nil
	}
	c.mu.Unlock()
	if drop != nil {
		_ = drop.Close(context.Background())
	}
	m.rt.residents.trim()
}

// compileOnDemand compiles the module from its file for p. It is not
// bounded by any one caller's deadline (the compile limits bound it), so
// a caller that gives up does not waste the work for the next.
func (m *Module) compileOnDemand(p *compiling) {
	defer m.rt.life.done()
	defer m.rt.compiling.Add(-1)
	start := time.Now()
	compiled, err := m.recompile(m.rt.life.ctx)
	if m.Unverified() && err != nil {
		err = claimVerdict(m.rt.life.ctx, m, err)
	}
	c := &m.code
	c.mu.Lock()
	var ce *ClaimError
	if errors.As(err, &ce) {
		c.refused = err
	}
	p.err = err
	c.pending = nil
	if err == nil && c.closed {
		_ = compiled.Close(context.Background())
		p.err = errModuleClosed
	} else if err == nil {
		c.compiled = compiled
		m.rt.residents.touch(m)
	}
	c.mu.Unlock()
	close(p.done)
	if err != nil {
		m.rt.logger.Warn("compiling a module on demand failed", "file", m.Path, "err", err)
		return
	}
	m.rt.logger.Info("module compiled on demand", "file", m.Path, "took", time.Since(start))
	m.rt.residents.trim()
}

// warmUp compiles m in the background, a few modules at a time
// (Config.WarmUp), unless the resident budget is already spent. It goes
// through acquireCode, so a call that started the compile first is joined,
// not repeated, and a call never queues behind the warm-up's slots.
func (r *Runtime) warmUp(m *Module) {
	if !r.life.add() {
		return
	}
	r.warmQueued.Add(1)
	go func() {
		defer r.life.done()
		queued := true
		defer func() {
			if queued {
				r.warmQueued.Add(-1)
			}
		}()
		select {
		case r.warmSlots <- struct{}{}:
		case <-r.life.ctx.Done():
			return
		}
		defer func() { <-r.warmSlots }()
		queued = false
		r.warmQueued.Add(-1)
		if r.residents.max > 0 && r.residents.count() >= r.residents.max {
			return // the budget is spent: the first call compiles it
		}
		if _, err := m.acquireCode(r.life.ctx); err == nil {
			m.releaseCode()
		}
	}()
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
	sum := sha256.Sum256(wasm)
	if hex.EncodeToString(sum[:]) != m.SHA256 {
		return nil, &abi.Error{Kind: abi.KindTransient, Message: fmt.Sprintf("module %s changed on disk since it was loaded; call again once it reloads", m.Path)}
	}
	fresh, err := m.rt.compile(ctx, m.Path, wasm, sum, wantExports, "")
	if err == nil && m.Unverified() {
		// Listed from its toolhost.manifest section: the section is
		// checked before any call runs the code.
		if err := m.verifyClaim(ctx, fresh); err != nil {
			_ = fresh.code.compiled.Close(ctx)
			return nil, err
		}
		return fresh.code.compiled, nil
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
	if fresh.minBytes != m.minBytes || fresh.egress != m.egress || fresh.notes != m.notes || fresh.hasInit != m.hasInit {
		_ = fresh.code.compiled.Close(ctx)
		m.rt.dropDescribe(m.SHA256)
		return nil, &Fault{Module: m.Path, Reason: "the compiled module does not match its describe cache entry (entry deleted; it is described again on the next load)"}
	}
	return fresh.code.compiled, nil
}

// residents is the runtime's tool modules with compiled code in memory,
// by last use, kept within Config.MaxResident by releasing the idle ones
// used longest ago.
type residents struct {
	max int // 0: no budget

	// Lock order: a module's code.mu, then mu; trim takes them one at a
	// time.
	mu   sync.Mutex
	seq  uint64
	last map[*Module]uint64
}

func (r *residents) touch(m *Module) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.last == nil {
		r.last = map[*Module]uint64{}
	}
	r.seq++
	r.last[m] = r.seq
}

func (r *residents) forget(m *Module) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.last, m)
}

// count is how many modules have compiled code in memory.
func (r *residents) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.last)
}

// trim releases idle modules, least recently used first, while more than
// max are resident. A module in use stays; the budget is met again as its
// calls end.
func (r *residents) trim() {
	if r.max <= 0 {
		return
	}
	r.mu.Lock()
	over := len(r.last) - r.max
	var oldest []*Module
	if over > 0 {
		for m := range r.last {
			oldest = append(oldest, m)
		}
		slices.SortFunc(oldest, func(a, b *Module) int { return cmp.Compare(r.last[a], r.last[b]) })
	}
	r.mu.Unlock()
	for _, m := range oldest {
		if over == 0 {
			return
		}
		if m.release() {
			over--
		}
	}
}

// release drops the module's compiled code if no instance uses it; the
// next call compiles it again (from the file cache). It reports whether
// the code is gone.
func (m *Module) release() bool {
	c := &m.code
	c.mu.Lock()
	if c.users > 0 {
		c.mu.Unlock()
		return false
	}
	drop := c.compiled
	c.compiled = nil
	m.rt.residents.forget(m) // under c.mu, like touch
	c.mu.Unlock()
	if drop != nil {
		_ = drop.Close(context.Background())
		m.rt.released.Add(1)
	}
	return true
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
}

// ModuleStats returns the runtime's counts so far.
func (r *Runtime) ModuleStats() ModuleStats {
	return ModuleStats{Compiles: r.compiles.Load(), DescribeHits: r.describeHits.Load(),
		Compiling: r.compiling.Load(), WarmQueued: r.warmQueued.Load(), Resident: r.residents.count(), Released: r.released.Load()}
}

// Resident reports whether the module's compiled code is in memory.
func (m *Module) Resident() bool {
	m.code.mu.Lock()
	defer m.code.mu.Unlock()
	return m.code.compiled != nil
}
