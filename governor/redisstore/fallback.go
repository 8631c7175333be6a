package redisstore

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/toolhost/toolhost/governor"
	"github.com/toolhost/toolhost/internal/redisconn"
)

// Fallback is the governor.Store a replica uses with Redis: the shared
// Store while Redis answers, and while it does not (unreachable, or slower
// than the command timeout) a local Memory at 1/Replicas of every quota's
// capacity and burst, so that N replicas on their own still stay near the
// quota. Back to shared when Redis answers again, without a restart. It is
// safe for concurrent use.
type Fallback struct {
	shared   *Store
	local    *governor.Memory
	replicas int64
	onChange func(err error)

	mu     sync.Mutex
	inLoc  bool
	draws  atomic.Int64
	spells atomic.Int64
}

// NewFallback returns shared with a local fallback for replicas replicas
// (at least 1). onChange, if set, is called when the store goes local
// (with Redis's error) and when it is shared again (nil), for the
// warning and the event.
func NewFallback(shared *Store, replicas int, onChange func(err error)) *Fallback {
	return &Fallback{shared: shared, local: governor.NewMemory(), replicas: int64(max(replicas, 1)), onChange: onChange}
}

// Local reports whether the store is on its local fallback now.
func (f *Fallback) Local() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.inLoc
}

// LocalDraws is how many store operations the local fallback served, and
// Spells how many times the store went local: the metrics of degradation.
func (f *Fallback) LocalDraws() int64 { return f.draws.Load() }

// Spells is how many times the store went local.
func (f *Fallback) Spells() int64 { return f.spells.Load() }

func (f *Fallback) setLocal(local bool, err error) {
	f.mu.Lock()
	changed := f.inLoc != local
	f.inLoc = local
	f.mu.Unlock()
	if !changed {
		return
	}
	if local {
		f.spells.Add(1)
	}
	if f.onChange != nil {
		f.onChange(err)
	}
}

// try runs op on the shared store unless Redis is known down; it reports
// whether the caller must use the local store instead.
func (f *Fallback) try(op func() error) (local bool, err error) {
	if err := f.shared.conn.Err(); err != nil {
		f.setLocal(true, err)
		f.draws.Add(1)
		return true, nil
	}
	err = op()
	if err != nil && errors.Is(err, redisconn.ErrDown) {
		f.setLocal(true, err)
		f.draws.Add(1)
		return true, nil
	}
	f.setLocal(false, nil)
	return false, err
}

// scale is a quota's share for one of N replicas: capacity and burst
// divided by N (at least 1 each).
func (f *Fallback) scale(l governor.Limit) governor.Limit {
	l.Capacity = max(l.Capacity/f.replicas, 1)
	l.Burst = max(l.Burst/f.replicas, 1)
	return l
}

// fleet restates a local answer for the whole fleet: usage is estimated
// as N replicas' worth, so that throttling still reacts. Agents stay this
// replica's own counts: no estimate says which agents the others served.
func (f *Fallback) fleet(r governor.Result) governor.Result {
	r.Used *= f.replicas
	return r
}

// Take implements governor.Store.
func (f *Fallback) Take(ctx context.Context, quota string, l governor.Limit, d governor.Draw) (governor.Result, error) {
	var r governor.Result
	local, err := f.try(func() (err error) { r, err = f.shared.Take(ctx, quota, l, d); return })
	if !local {
		return r, err
	}
	sl := f.scale(l)
	d.Reserve = min(d.Reserve*sl.Burst/l.Burst, sl.Burst-1)
	r, err = f.local.Take(ctx, quota, sl, d)
	return f.fleet(r), err
}

// Block implements governor.Store.
func (f *Fallback) Block(ctx context.Context, quota string, l governor.Limit, dur time.Duration) (governor.Result, error) {
	var r governor.Result
	local, err := f.try(func() (err error) { r, err = f.shared.Block(ctx, quota, l, dur); return })
	if !local {
		return r, err
	}
	r, err = f.local.Block(ctx, quota, f.scale(l), dur)
	return f.fleet(r), err
}

// Peek implements governor.Store.
func (f *Fallback) Peek(ctx context.Context, quota string, l governor.Limit) (governor.Result, error) {
	var r governor.Result
	local, err := f.try(func() (err error) { r, err = f.shared.Peek(ctx, quota, l); return })
	if !local {
		return r, err
	}
	r, err = f.local.Peek(ctx, quota, f.scale(l))
	return f.fleet(r), err
}

// Refund implements governor.Store.
func (f *Fallback) Refund(ctx context.Context, quota string, l governor.Limit, cost int64, agent string) error {
	local, err := f.try(func() error { return f.shared.Refund(ctx, quota, l, cost, agent) })
	if !local {
		return err
	}
	return f.local.Refund(ctx, quota, f.scale(l), cost, agent)
}

// Changed implements governor.Shared.
func (f *Fallback) Changed(quota string) { f.shared.Changed(quota) }

// OnChanged implements governor.Shared.
func (f *Fallback) OnChanged(fn func(quota string)) { f.shared.OnChanged(fn) }
