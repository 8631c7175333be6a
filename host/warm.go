package host

import (
	"context"
	"io"
	"log/slog"

	"github.com/toolhost/toolhost/host/internal/warm"
	"github.com/toolhost/toolhost/imports/toolhostv1"
)

// Warm instances (docs/ABI.md, "Warm instances"): host/internal/warm keeps
// the pools, their bounds and the reasons to retire; here is how the host
// makes, binds and closes what they keep.

func newWarmPools(cfg Reuse, logger *slog.Logger) *warm.Pools[*Module, *instance] {
	return warm.New[*Module, *instance](reuseWithDefaults(cfg), logger,
		func(m *Module) string { return m.Path }, func(m *Module) *warm.ModState { return &m.warm })
}

// warmMaker makes the instances of one pool: m's, under lim.
type warmMaker struct {
	m   *Module
	lim Limits
}

// Make makes an instance in a call: its _initialize's output goes to the
// call's.
func (w warmMaker) Make(ctx context.Context, out io.Writer) (*instance, error) {
	st := &callState{}
	st.bind(ctx, out)
	return w.m.instantiateWarm(ctx, w.lim, st)
}

// Warm makes a spare off the request path: its _initialize runs under the
// module's warming context, bounded like a load's, with egress refused (it
// serves no call yet).
func (w warmMaker) Warm(ctx context.Context) (*instance, error) {
	m := w.m
	ctx, cancel := context.WithTimeout(ctx, m.rt.cfg.DescribeTimeout)
	defer cancel()
	ctx = toolhostv1.WithCall(ctx, toolhostv1.Loading(moduleName(m.Path)))
	st := &callState{}
	st.bind(ctx, discard{})
	inst, err := m.instantiateWarm(ctx, w.lim, st)
	st.bind(nil, nil)
	return inst, err
}

// Bind points a warm instance's sleeps and output at a call (nil, nil:
// none).
func (i *instance) Bind(ctx context.Context, out io.Writer) { i.st.bind(ctx, out) }

// MemoryBytes is the size of the instance's linear memory now.
func (i *instance) MemoryBytes() uint64 { return uint64(i.mod.Memory().Size()) }

// Close frees the instance.
func (i *instance) Close() { i.close() }
