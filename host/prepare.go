package host

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"

	"github.com/toolhost/toolhost/abi"
)

// prepared is what Prepare waited for on behalf of one call: the module's
// code, held resident until done, and, for a call that will make a fresh
// instance, an admission slot, which the call takes over instead of
// queueing again.
type prepared struct {
	m      *Module
	slot   bool        // an admission slot is held
	taken  atomic.Bool // the call's fresh instance took the slot
	finish sync.Once
}

type preparedKey struct{}

// Prepare waits, under ctx (the caller's deadline, not the tool's
// timeout), for what a call of req needs before its guest can run: the
// module's compiled code (compiled on demand when it is not resident) and,
// unless the call may run in one of the caller's warm instances, a slot to
// make a fresh instance in (Config.MaxFresh). It returns ctx carrying what
// it got, for Do to use instead of waiting again, and done, which gives it
// back and must be called once the call is over. A call whose warm pool
// has no room falls back to a fresh instance and queues for its slot
// inside the call, as a call without Prepare does.
//
// The error wraps ctx's error when ctx ended first; otherwise it is the
// error Do would have returned (an *abi.Error when the file changed since
// it was listed, a *Fault when the code does not compile).
func (m *Module) Prepare(ctx context.Context, req Request) (context.Context, func(), error) {
	if _, err := m.acquireCode(ctx); err != nil {
		return nil, nil, m.prepareError(ctx, req.Tool, err)
	}
	p := &prepared{m: m}
	if !(req.Reuse && m.Reusable(req.Tool)) {
		if err := m.rt.admit.enter(ctx); err != nil {
			m.releaseCode()
			return nil, nil, m.prepareError(ctx, req.Tool, err)
		}
		p.slot = true
	}
	return context.WithValue(ctx, preparedKey{}, p), p.done, nil
}

func (p *prepared) done() {
	p.finish.Do(func() {
		if p.slot {
			p.m.rt.admit.leave()
		}
		p.m.releaseCode()
	})
}

// takeSlot hands the prepared slot to the one fresh instance of the call,
// if ctx carries one prepared for m.
func takeSlot(ctx context.Context, m *Module) bool {
	p, _ := ctx.Value(preparedKey{}).(*prepared)
	return p != nil && p.m == m && p.slot && p.taken.CompareAndSwap(false, true)
}

func (m *Module) prepareError(ctx context.Context, tool string, err error) error {
	var ae *abi.Error
	if errors.As(err, &ae) {
		return ae // the file changed since it was listed: not the tool's fault
	}
	return m.fault(ctx, tool, "compiling", err, &capWriter{})
}
