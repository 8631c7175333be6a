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

	// form, when the call runs on the interpreter while of's code
	// compiles (interp.go): m is then form's module.
	form *interpForm
	of   *Module
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
	if f := m.interpretedFor(ctx); f != nil {
		return m.prepareInterpreted(ctx, req, f)
	}
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

// prepareInterpreted is Prepare for a call that runs on f, m's
// interpreted form: its code and a slot for its fresh instance.
func (m *Module) prepareInterpreted(ctx context.Context, req Request, f *interpForm) (context.Context, func(), error) {
	if _, err := f.mod.acquireCode(ctx); err != nil { // counted by f, so not closed
		m.doneInterpreting(f)
		return nil, nil, m.prepareError(ctx, req.Tool, err)
	}
	if err := m.rt.admit.enter(ctx); err != nil {
		f.mod.releaseCode()
		m.doneInterpreting(f)
		return nil, nil, m.prepareError(ctx, req.Tool, err)
	}
	p := &prepared{m: f.mod, slot: true, form: f, of: m}
	return context.WithValue(ctx, preparedKey{}, p), p.done, nil
}

func (p *prepared) done() {
	p.finish.Do(func() {
		if p.slot {
			p.m.rt.admit.leave()
		}
		p.m.releaseCode()
		if p.form != nil {
			p.of.doneInterpreting(p.form)
		}
	})
}

// preparedForm is the interpreted form Prepare chose for a call of m
// that ctx carries, or nil.
func preparedForm(ctx context.Context, m *Module) *interpForm {
	p, _ := ctx.Value(preparedKey{}).(*prepared)
	if p == nil || p.of != m {
		return nil
	}
	return p.form
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
