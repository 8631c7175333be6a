package host

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/toolhost/toolhost/abi"
	"github.com/toolhost/toolhost/imports/toolhostv1"
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
// Every count and list below is guarded by warmPools.mu; instances are
// instantiated and closed outside it.

// poolKey names one pool. The memory limit is part of it because it is
// fixed in an instance when it is made.
type poolKey struct {
	mod    *Module
	tool   string
	caller string
	memory uint64
}

// toolKey names a tool of one module version, the unit of MaxPerTool.
type toolKey struct {
	mod  *Module
	tool string
}

// warmPools is a Runtime's warm instances.
type warmPools struct {
	cfg    Reuse
	logger *slog.Logger

	mu      sync.Mutex
	pools   map[poolKey]*pool
	perTool map[toolKey]int // instances held: idle, busy and warming
	total   int
	live    map[*modWarm]struct{} // modules with warm state, until closed
	retired map[string]uint64
	closed  bool
	janitor chan struct{} // closed to stop the idle sweeper; nil until it starts
	swept   sync.WaitGroup
}

// modWarm is what a module's warm instances share: the context its
// background warming runs under, ended when the module closes, and the
// warmers to wait for before its compiled code is released.
type modWarm struct {
	ctx     context.Context
	cancel  context.CancelFunc
	warmers sync.WaitGroup
	closing bool
}

type pool struct {
	lim     Limits
	idle    []*warmInstance // warmed (unused) first, then by return; calls take the last
	busy    int
	warming int
}

// warmInstance is an instance kept between calls, with its own sleep and
// output hooks (callState) pointed at whichever call runs in it.
type warmInstance struct {
	*instance
	key   poolKey
	uses  int
	since time.Time // when it last went idle
}

func newWarmPools(cfg Reuse, logger *slog.Logger) *warmPools {
	return &warmPools{cfg: reuseWithDefaults(cfg), logger: logger, pools: map[poolKey]*pool{},
		perTool: map[toolKey]int{}, live: map[*modWarm]struct{}{}, retired: map[string]uint64{}}
}

// acquire returns a warm instance for key bound to this call (ctx, out),
// or nil when the call is to run in a one-off fresh instance: reuse is
// closed for the module or the bounds leave no room.
func (p *warmPools) acquire(ctx context.Context, key poolKey, lim Limits, out *capWriter) (*warmInstance, error) {
	now := p.cfg.Now()
	p.mu.Lock()
	mw := p.modLocked(key.mod)
	if p.closed || mw == nil {
		p.mu.Unlock()
		return nil, nil
	}
	pl := p.pools[key]
	if pl == nil {
		pl = &pool{lim: lim}
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
		w.st.bind(ctx, out)
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
	st := &callState{}
	st.bind(ctx, out)
	inst, err := key.mod.instantiateWarm(ctx, lim, st)
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
	return &warmInstance{instance: inst, key: key}, nil
}

// release hands w back after its call, which ended with err under ctx:
// back to its pool, or retired.
func (p *warmPools) release(ctx context.Context, w *warmInstance, err error) {
	w.uses++
	reason := p.retireReason(ctx, w, err)
	w.st.bind(nil, nil)
	p.mu.Lock()
	pl := p.pools[w.key]
	pl.busy--
	mw := w.key.mod.warm
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
	w.close()
	if warm {
		go p.warm(w.key, mw)
	}
}

// retireReason says why w must not serve another call after one that ended
// with err under ctx, or "" when it may.
func (p *warmPools) retireReason(ctx context.Context, w *warmInstance, err error) string {
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
	if uint64(w.mod.Memory().Size()) > p.cfg.MemoryHighWater {
		return RetiredMemory
	}
	return ""
}

// startWarmLocked reserves room for one background instance of key and
// registers its warmer, or reports false when there is no room (warming
// never evicts anyone).
func (p *warmPools) startWarmLocked(key poolKey, pl *pool, mw *modWarm) bool {
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

// warm makes one instance of key off the request path and pools it. Its
// _initialize runs under the module's warming context, bounded like a
// load's, with egress refused: it serves no call yet.
func (p *warmPools) warm(key poolKey, mw *modWarm) {
	defer mw.warmers.Done()
	m := key.mod
	ctx, cancel := context.WithTimeout(mw.ctx, m.rt.cfg.DescribeTimeout)
	defer cancel()
	ctx = toolhostv1.WithCall(ctx, toolhostv1.Loading(moduleName(m.Path)))
	p.mu.Lock()
	lim := p.pools[key].lim
	p.mu.Unlock()
	st := &callState{}
	st.bind(ctx, discard{})
	inst, err := m.instantiateWarm(ctx, lim, st)
	st.bind(nil, nil)
	p.mu.Lock()
	pl := p.pools[key]
	pl.warming--
	if err != nil || p.closed || mw.closing {
		p.unreserveLocked(key)
		p.dropIfEmptyLocked(key, pl)
		p.mu.Unlock()
		if inst != nil {
			inst.close()
		}
		if err != nil && mw.ctx.Err() == nil {
			p.logger.Warn("warming an instance failed; calls get fresh ones until one succeeds",
				"module", m.Path, "tool", key.tool, "err", err)
		}
		return
	}
	// At the bottom: a call takes the instance its caller used last, so a
	// spare stays a spare (and expires unused when the caller is steady).
	pl.idle = append([]*warmInstance{{instance: inst, key: key, since: p.cfg.Now()}}, pl.idle...)
	p.startJanitorLocked()
	p.mu.Unlock()
}

// reserveLocked counts one more instance of key against the bounds. With
// evict, a bound that is full makes room by retiring the least recently
// used idle instance it covers; the retired instances are returned for the
// caller to close outside the lock.
func (p *warmPools) reserveLocked(key poolKey, evict bool) ([]*warmInstance, bool) {
	var evicted []*warmInstance
	tk := toolKey{key.mod, key.tool}
	if p.perTool[tk] >= p.cfg.MaxPerTool {
		w := p.oldestIdleLocked(func(k poolKey) bool { return k.mod == key.mod && k.tool == key.tool })
		if !evict || w == nil {
			return nil, false
		}
		evicted = append(evicted, w)
	}
	if p.total >= p.cfg.MaxTotal {
		w := p.oldestIdleLocked(func(poolKey) bool { return true })
		if !evict || w == nil {
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
func (p *warmPools) oldestIdleLocked(match func(poolKey) bool) *warmInstance {
	var best *warmInstance
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

func (p *warmPools) unreserveLocked(key poolKey) {
	tk := toolKey{key.mod, key.tool}
	p.total--
	if p.perTool[tk]--; p.perTool[tk] == 0 {
		delete(p.perTool, tk)
	}
}

// dropIfEmptyLocked forgets a pool with nothing in it, so that the map
// holds no more pools than the bounds hold instances (plus calls taking
// one-off instances).
func (p *warmPools) dropIfEmptyLocked(key poolKey, pl *pool) {
	if len(pl.idle) == 0 && pl.busy == 0 && pl.warming == 0 && p.pools[key] == pl {
		delete(p.pools, key)
	}
}

// expireLocked removes the instances of pl idle for IdleTimeout or longer
// and returns them to be closed.
func (p *warmPools) expireLocked(key poolKey, pl *pool, now time.Time) []*warmInstance {
	var old []*warmInstance
	pl.idle = slices.DeleteFunc(pl.idle, func(w *warmInstance) bool {
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

// sweep retires every instance idle past IdleTimeout.
func (p *warmPools) sweep() {
	now := p.cfg.Now()
	var drop []*warmInstance
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
func (p *warmPools) startJanitorLocked() {
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
				p.sweep()
			}
		}
	}()
}

// modLocked returns m's shared warming state, made on first use; nil once
// m is closing.
func (p *warmPools) modLocked(m *Module) *modWarm {
	mw := m.warm
	if mw == nil {
		ctx, cancel := context.WithCancel(context.Background())
		mw = &modWarm{ctx: ctx, cancel: cancel}
		m.warm = mw
		p.live[mw] = struct{}{}
	}
	if mw.closing {
		return nil
	}
	return mw
}

// closeModule retires m's idle instances, stops its warmers and waits for
// them; instances in a call are retired when their call returns. After it,
// m's compiled code may be released.
func (p *warmPools) closeModule(m *Module) {
	p.mu.Lock()
	mw := m.warm
	if mw == nil {
		// No call ever asked for a warm instance: nothing to drain, and
		// none may start now.
		m.warm = &modWarm{closing: true}
		p.mu.Unlock()
		return
	}
	mw.closing = true
	drop := p.takeIdleLocked(func(k poolKey) bool { return k.mod == m })
	p.mu.Unlock()
	mw.cancel()
	mw.warmers.Wait()
	closeAll(drop)
	p.mu.Lock()
	delete(p.live, mw)
	p.mu.Unlock()
}

// takeIdleLocked removes every idle instance of the pools match selects.
func (p *warmPools) takeIdleLocked(match func(poolKey) bool) []*warmInstance {
	var drop []*warmInstance
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

// close retires every idle instance, stops all warming and the sweeper.
func (p *warmPools) close() {
	p.mu.Lock()
	p.closed = true
	drop := p.takeIdleLocked(func(poolKey) bool { return true })
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

func closeAll(ws []*warmInstance) {
	for _, w := range ws {
		w.close()
	}
}
