// Package warm keeps warm instances: pools of instances kept between the
// calls of one caller to one tool of one module version, within bounds
// (per tool, in all), retired after anything that could leave them broken
// or stale, and warmed one spare ahead off the request path. It knows
// pools, bounds and reasons; how an instance is made, bound to a call and
// closed is the host's (Instance, Maker). It is host's alone.
package warm

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/toolhost/toolhost/abi"
	"github.com/toolhost/toolhost/internal/hostconf"
)

// Warm instances. A pool holds one caller's instances of one tool of one
// module version: a pool is never shared between callers, so what a tool
// leaves in memory between calls is seen by the same caller only. The
// host runs one call at a time in an instance (a taken instance leaves the
// pool until its call returns), and retires it after anything that could
// leave it broken or stale: a failed call (a schema error excepted, which
// the guest reported and so handled), a deadline or cancellation, a trap,
// MaxUses calls, IdleTimeout without a call, memory past the high-water
// mark, or its module's close (a hot reload).
//
// Every count and list below is guarded by Pools.mu; instances are
// instantiated and closed outside it.

// Why an instance was retired (Pools.Retired).
const (
	RetiredError   = "error"   // the call failed (any kind but schema), trapped or broke the ABI
	RetiredStopped = "stopped" // the call's deadline passed or it was cancelled
	RetiredUses    = "uses"    // Reuse.MaxUses calls
	RetiredIdle    = "idle"    // Reuse.IdleTimeout without a call
	RetiredMemory  = "memory"  // linear memory past Reuse.MemoryHighWater
	RetiredEvicted = "evicted" // made room for another caller or tool under the bounds
	RetiredClosed  = "closed"  // its module was replaced (hot reload) or closed
)

// Instance is one instance a pool keeps. Only the goroutine that took it
// (Acquire) uses it until it is handed back (Release).
type Instance interface {
	// Bind points the instance's sleeps and output at a call; Bind(nil,
	// nil) between calls.
	Bind(ctx context.Context, out io.Writer)
	// MemoryBytes is the size of its linear memory now.
	MemoryBytes() uint64
	// Close frees it.
	Close()
}

// Maker makes the instances of one pool (the host's module and limits).
type Maker[I Instance] interface {
	// Make makes an instance for the call of ctx, its start-up output to
	// out.
	Make(ctx context.Context, out io.Writer) (I, error)
	// Warm makes a spare off the request path, under ctx (the module's
	// warming context: ended when the module closes).
	Warm(ctx context.Context) (I, error)
}

// Key names one pool: a caller's instances of one tool of one module
// version M. The memory limit is part of it because it is fixed in an
// instance when it is made.
type Key[M comparable] struct {
	Mod    M
	Tool   string
	Caller string
	Memory uint64
}

// toolKey names a tool of one module version, the unit of MaxPerTool.
type toolKey[M comparable] struct {
	mod  M
	tool string
}

// Pools is a runtime's warm instances of modules M. It is safe for
// concurrent use.
type Pools[M comparable, I Instance] struct {
	cfg    hostconf.Reuse
	logger *slog.Logger
	name   func(M) string    // a module's file, for logs and stats
	state  func(M) *ModState // where a module keeps its warm state

	mu      sync.Mutex
	pools   map[Key[M]]*pool[M, I]
	perTool map[toolKey[M]]int // instances held: idle, busy and warming
	total   int
	live    map[*modWarm]struct{} // modules with warm state, until closed
	retired map[string]uint64
	closed  bool
	janitor chan struct{} // closed to stop the idle sweeper; nil until it starts
	swept   sync.WaitGroup
}

// ModState is a module's warm state, which the host keeps with each module
// (the zero value: none yet). The Pools guard it.
type ModState struct{ w *modWarm }

// modWarm is what a module's warm instances share: the context its
// background warming runs under, ended when the module closes, and the
// warmers to wait for before its compiled code is released.
type modWarm struct {
	ctx     context.Context
	cancel  context.CancelFunc
	warmers sync.WaitGroup
	closing bool
}

type pool[M comparable, I Instance] struct {
	maker   Maker[I]
	idle    []*Warm[M, I] // warmed (unused) first, then by return; calls take the last
	busy    int
	warming int
}

// Warm is an instance taken from a pool for one call, until Release.
type Warm[M comparable, I Instance] struct {
	Inst  I
	key   Key[M]
	uses  int
	since time.Time // when it last went idle
}

// New returns the pools within cfg's bounds (defaults applied: every
// field set, Now included); name gives a module's file for logs and
// stats, state the ModState it keeps.
func New[M comparable, I Instance](cfg hostconf.Reuse, logger *slog.Logger, name func(M) string, state func(M) *ModState) *Pools[M, I] {
	return &Pools[M, I]{cfg: cfg, logger: logger, name: name, state: state, pools: map[Key[M]]*pool[M, I]{},
		perTool: map[toolKey[M]]int{}, live: map[*modWarm]struct{}{}, retired: map[string]uint64{}}
}

// Off reports whether reuse is off (Reuse.Off).
func (p *Pools[M, I]) Off() bool { return p.cfg.Off }

// Acquire returns a warm instance for key bound to this call (ctx, out),
// or nil when the call is to run in a one-off fresh instance: reuse is
// closed for the module or the bounds leave no room. maker makes the
// pool's instances (the first call's maker serves the pool).
func (p *Pools[M, I]) Acquire(ctx context.Context, key Key[M], maker Maker[I], out io.Writer) (*Warm[M, I], error) {
	now := p.cfg.Now()
	p.mu.Lock()
	mw := p.modLocked(key.Mod)
	if p.closed || mw == nil {
		p.mu.Unlock()
		return nil, nil
	}
	pl := p.pools[key]
	if pl == nil {
		pl = &pool[M, I]{maker: maker}
		p.pools[key] = pl
	}
	drop := p.expireLocked(key, pl, now)
	if n := len(pl.idle); n > 0 {
		w := pl.idle[n-1]
		pl.idle = pl.idle[:n-1]
		pl.busy++
		// One spare at a time: the caller's next call finds it ready.
		warm := len(pl.idle) == 0 && pl.warming == 0 && p.startWarmLocked(key, pl, mw)
		p.mu.Unlock()
		closeAll(drop)
		if warm {
			go p.warm(key, mw)
		}
		w.Inst.Bind(ctx, out)
		return w, nil
	}
	evicted, ok := p.reserveLocked(key, true)
	drop = append(drop, evicted...)
	if !ok {
		p.dropIfEmptyLocked(key, pl)
		p.mu.Unlock()
		closeAll(drop)
		return nil, nil
	}
	pl.busy++
	warm := pl.warming == 0 && p.startWarmLocked(key, pl, mw) // first use: the next call's instance
	p.mu.Unlock()
	closeAll(drop)
	inst, err := maker.Make(ctx, out)
	if err != nil {
		p.mu.Lock()
		pl.busy--
		p.unreserveLocked(key)
		p.dropIfEmptyLocked(key, pl)
		p.mu.Unlock()
		if warm {
			go p.warm(key, mw)
		}
		return nil, err
	}
	if warm {
		go p.warm(key, mw)
	}
	inst.Bind(ctx, out)
	return &Warm[M, I]{Inst: inst, key: key}, nil
}

// Release hands w back after its call, which ended with err under ctx:
// back to its pool, or retired.
func (p *Pools[M, I]) Release(ctx context.Context, w *Warm[M, I], err error) {
	w.uses++
	reason := p.retireReason(ctx, w, err)
	w.Inst.Bind(nil, nil)
	p.mu.Lock()
	pl := p.pools[w.key]
	pl.busy--
	mw := p.state(w.key.Mod).w
	if reason == "" && (p.closed || mw.closing) {
		reason = RetiredClosed
	}
	if reason == "" {
		w.since = p.cfg.Now()
		pl.idle = append(pl.idle, w)
		p.mu.Unlock()
		return
	}
	p.retired[reason]++
	p.unreserveLocked(w.key)
	// A replacement, so that the caller's next call finds one ready.
	warm := reason != RetiredClosed && len(pl.idle) == 0 && pl.warming == 0 && p.startWarmLocked(w.key, pl, mw)
	p.dropIfEmptyLocked(w.key, pl)
	p.mu.Unlock()
	w.Inst.Close()
	if warm {
		go p.warm(w.key, mw)
	}
}

// retireReason says why w must not serve another call after one that ended
// with err under ctx, or "" when it may.
func (p *Pools[M, I]) retireReason(ctx context.Context, w *Warm[M, I], err error) string {
	if ctx.Err() != nil {
		// Even a call that returned: a sleep or an egress request in it
		// was cut short, and the guest may hold half-done state.
		return RetiredStopped
	}
	if err != nil {
		var ae *abi.Error
		if !errors.As(err, &ae) || ae.Kind != abi.KindSchema {
			return RetiredError
		}
	}
	if w.uses >= p.cfg.MaxUses {
		return RetiredUses
	}
	if w.Inst.MemoryBytes() > p.cfg.MemoryHighWater {
		return RetiredMemory
	}
	return ""
}

// startWarmLocked reserves room for one background instance of key and
// registers its warmer, or reports false when there is no room (warming
// never evicts anyone).
func (p *Pools[M, I]) startWarmLocked(key Key[M], pl *pool[M, I], mw *modWarm) bool {
	if mw == nil || mw.closing || p.closed {
		return false
	}
	if _, ok := p.reserveLocked(key, false); !ok {
		return false
	}
	pl.warming++
	mw.warmers.Add(1)
	return true
}

// warm makes one instance of key off the request path (the pool's
// Maker.Warm, under the module's warming context) and pools it.
func (p *Pools[M, I]) warm(key Key[M], mw *modWarm) {
	defer mw.warmers.Done()
	p.mu.Lock()
	maker := p.pools[key].maker
	p.mu.Unlock()
	inst, err := maker.Warm(mw.ctx)
	p.mu.Lock()
	pl := p.pools[key]
	pl.warming--
	if err != nil || p.closed || mw.closing {
		p.unreserveLocked(key)
		p.dropIfEmptyLocked(key, pl)
		p.mu.Unlock()
		if err == nil {
			inst.Close()
		}
		if err != nil && mw.ctx.Err() == nil {
			p.logger.Warn("warming an instance failed; calls get fresh ones until one succeeds",
				"module", p.name(key.Mod), "tool", key.Tool, "err", err)
		}
		return
	}
	// At the bottom: a call takes the instance its caller used last, so a
	// spare stays a spare (and expires unused when the caller is steady).
	pl.idle = append([]*Warm[M, I]{{Inst: inst, key: key, since: p.cfg.Now()}}, pl.idle...)
	p.startJanitorLocked()
	p.mu.Unlock()
}

// reserveLocked counts one more instance of key against the bounds. With
// evict, a bound that is full makes room by retiring the least recently
// used idle instance it covers; the retired instances are returned for the
// caller to close outside the lock.
func (p *Pools[M, I]) reserveLocked(key Key[M], evict bool) ([]*Warm[M, I], bool) {
	var evicted []*Warm[M, I]
	tk := toolKey[M]{key.Mod, key.Tool}
	// Without evict, look before taking: oldestIdleLocked removes what it
	// finds, and an instance removed and not returned is never closed.
	if p.perTool[tk] >= p.cfg.MaxPerTool {
		if !evict {
			return nil, false
		}
		w := p.oldestIdleLocked(func(k Key[M]) bool { return k.Mod == key.Mod && k.Tool == key.Tool })
		if w == nil {
			return nil, false
		}
		evicted = append(evicted, w)
	}
	if p.total >= p.cfg.MaxTotal {
		if !evict {
			return evicted, false
		}
		w := p.oldestIdleLocked(func(Key[M]) bool { return true })
		if w == nil {
			return evicted, false
		}
		evicted = append(evicted, w)
	}
	p.perTool[tk]++
	p.total++
	p.startJanitorLocked()
	return evicted, true
}

// oldestIdleLocked removes and returns the least recently used idle
// instance among the pools match selects, or nil.
func (p *Pools[M, I]) oldestIdleLocked(match func(Key[M]) bool) *Warm[M, I] {
	var best *Warm[M, I]
	at := -1
	for k, pl := range p.pools {
		if !match(k) {
			continue
		}
		for i, w := range pl.idle {
			if best == nil || w.since.Before(best.since) {
				best, at = w, i
			}
		}
	}
	if best == nil {
		return nil
	}
	pl := p.pools[best.key]
	pl.idle = slices.Delete(pl.idle, at, at+1)
	p.retired[RetiredEvicted]++
	p.unreserveLocked(best.key)
	p.dropIfEmptyLocked(best.key, pl)
	return best
}

func (p *Pools[M, I]) unreserveLocked(key Key[M]) {
	tk := toolKey[M]{key.Mod, key.Tool}
	p.total--
	if p.perTool[tk]--; p.perTool[tk] == 0 {
		delete(p.perTool, tk)
	}
}

// dropIfEmptyLocked forgets a pool with nothing in it, so that the map
// holds no more pools than the bounds hold instances (plus calls taking
// one-off instances).
func (p *Pools[M, I]) dropIfEmptyLocked(key Key[M], pl *pool[M, I]) {
	if len(pl.idle) == 0 && pl.busy == 0 && pl.warming == 0 && p.pools[key] == pl {
		delete(p.pools, key)
	}
}

// expireLocked removes the instances of pl idle for IdleTimeout or longer
// and returns them to be closed.
func (p *Pools[M, I]) expireLocked(key Key[M], pl *pool[M, I], now time.Time) []*Warm[M, I] {
	var old []*Warm[M, I]
	pl.idle = slices.DeleteFunc(pl.idle, func(w *Warm[M, I]) bool {
		if now.Sub(w.since) < p.cfg.IdleTimeout {
			return false
		}
		old = append(old, w)
		p.retired[RetiredIdle]++
		p.unreserveLocked(key)
		return true
	})
	return old
}

// Sweep retires every instance idle past IdleTimeout now (a sweeper
// does it on its own four times per IdleTimeout).
func (p *Pools[M, I]) Sweep() {
	now := p.cfg.Now()
	var drop []*Warm[M, I]
	p.mu.Lock()
	for k, pl := range p.pools {
		drop = append(drop, p.expireLocked(k, pl, now)...)
		p.dropIfEmptyLocked(k, pl)
	}
	p.mu.Unlock()
	closeAll(drop)
}

// startJanitorLocked starts the goroutine that sweeps idle instances, once
// there is something to sweep. It ticks four times per IdleTimeout, so an
// instance outlives its idle timeout by at most a quarter of it.
func (p *Pools[M, I]) startJanitorLocked() {
	if p.janitor != nil || p.closed {
		return
	}
	stop := make(chan struct{})
	p.janitor = stop
	p.swept.Add(1)
	go func() {
		defer p.swept.Done()
		t := time.NewTicker(max(p.cfg.IdleTimeout/4, time.Millisecond))
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
				p.Sweep()
			}
		}
	}()
}

// modLocked returns m's shared warming state, made on first use; nil once
// m is closing.
func (p *Pools[M, I]) modLocked(m M) *modWarm {
	st := p.state(m)
	mw := st.w
	if mw == nil {
		ctx, cancel := context.WithCancel(context.Background())
		mw = &modWarm{ctx: ctx, cancel: cancel}
		st.w = mw
		p.live[mw] = struct{}{}
	}
	if mw.closing {
		return nil
	}
	return mw
}

// CloseModule retires m's idle instances, stops its warmers and waits for
// them; instances in a call are retired when their call returns, and no
// call of m gets a warm instance again. After it, m's compiled code may be
// released.
func (p *Pools[M, I]) CloseModule(m M) {
	p.mu.Lock()
	st := p.state(m)
	mw := st.w
	if mw == nil {
		// No call ever asked for a warm instance: nothing to drain, and
		// none may start now.
		st.w = &modWarm{closing: true}
		p.mu.Unlock()
		return
	}
	mw.closing = true
	drop := p.takeIdleLocked(func(k Key[M]) bool { return k.Mod == m })
	p.mu.Unlock()
	mw.cancel()
	mw.warmers.Wait()
	closeAll(drop)
	p.mu.Lock()
	delete(p.live, mw)
	p.mu.Unlock()
}

// WaitWarming waits for m's instances being warmed in the background.
// Callers must not start calls of m while it waits.
func (p *Pools[M, I]) WaitWarming(m M) {
	p.mu.Lock()
	mw := p.state(m).w
	p.mu.Unlock()
	if mw != nil {
		mw.warmers.Wait()
	}
}

// takeIdleLocked removes every idle instance of the pools match selects.
func (p *Pools[M, I]) takeIdleLocked(match func(Key[M]) bool) []*Warm[M, I] {
	var drop []*Warm[M, I]
	for k, pl := range p.pools {
		if !match(k) {
			continue
		}
		for range pl.idle {
			p.retired[RetiredClosed]++
			p.unreserveLocked(k)
		}
		drop = append(drop, pl.idle...)
		pl.idle = nil
		p.dropIfEmptyLocked(k, pl)
	}
	return drop
}

// Close retires every idle instance, stops all warming and the sweeper.
func (p *Pools[M, I]) Close() {
	p.mu.Lock()
	p.closed = true
	drop := p.takeIdleLocked(func(Key[M]) bool { return true })
	var mws []*modWarm
	for mw := range p.live {
		mws = append(mws, mw)
	}
	if p.janitor != nil {
		close(p.janitor)
	}
	p.mu.Unlock()
	for _, mw := range mws {
		mw.cancel()
		mw.warmers.Wait()
	}
	p.swept.Wait()
	closeAll(drop)
}

func closeAll[M comparable, I Instance](ws []*Warm[M, I]) {
	for _, w := range ws {
		w.Inst.Close()
	}
}

// ToolStats is what the pools of one tool of one module version hold.
type ToolStats[M comparable] struct {
	Mod  M
	Tool string
	// Idle, Busy and Warming count instances: waiting for a call, in
	// one, being made in the background.
	Idle, Busy, Warming int
	// Callers is how many callers have a pool.
	Callers int
}

// Stats returns the pools' contents by tool, in no order.
func (p *Pools[M, I]) Stats() []ToolStats[M] {
	p.mu.Lock()
	defer p.mu.Unlock()
	byTool := map[toolKey[M]]*ToolStats[M]{}
	for k, pl := range p.pools {
		tk := toolKey[M]{k.Mod, k.Tool}
		s := byTool[tk]
		if s == nil {
			s = &ToolStats[M]{Mod: k.Mod, Tool: k.Tool}
			byTool[tk] = s
		}
		s.Idle += len(pl.idle)
		s.Busy += pl.busy
		s.Warming += pl.warming
		s.Callers++
	}
	out := make([]ToolStats[M], 0, len(byTool))
	for _, s := range byTool {
		out = append(out, *s)
	}
	return out
}

// Retired counts the instances retired so far, by reason (Retired*).
func (p *Pools[M, I]) Retired() map[string]uint64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return maps.Clone(p.retired)
}
