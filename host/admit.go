package host

import (
	"context"
	"sync"
	"sync/atomic"
)

// admission bounds how many fresh instances are being made and run at
// once (Config.MaxFresh). Past the CPUs, more at once only adds to every
// call's latency and holds one more instance's memory (10–20 MiB for a Go
// guest) per call: a call over the bound queues for a slot under its own
// deadline instead, and one whose deadline passes in the queue had no
// guest time, so the dispatcher reads its timeout as the host's, not the
// tool's (see internal/attempt).
type admission struct {
	slots chan struct{} // nil: no bound

	inUse    atomic.Int64
	mu       sync.Mutex
	peak     int64
	waited   atomic.Uint64 // calls that queued for a slot
	starved  atomic.Uint64 // calls whose context ended in the queue
	queueLen atomic.Int64
}

func newAdmission(n int) *admission {
	a := &admission{}
	if n > 0 {
		a.slots = make(chan struct{}, n)
	}
	return a
}

// enter takes a slot, waiting while none is free until ctx ends.
func (a *admission) enter(ctx context.Context) error {
	if a.slots == nil {
		a.count()
		return nil
	}
	select {
	case a.slots <- struct{}{}:
	default:
		a.waited.Add(1)
		a.queueLen.Add(1)
		defer a.queueLen.Add(-1)
		select {
		case a.slots <- struct{}{}:
		case <-ctx.Done():
			a.starved.Add(1)
			return ctx.Err()
		}
	}
	a.count()
	return nil
}

func (a *admission) count() {
	n := a.inUse.Add(1)
	a.mu.Lock()
	a.peak = max(a.peak, n)
	a.mu.Unlock()
}

// leave gives the slot back.
func (a *admission) leave() {
	a.inUse.Add(-1)
	if a.slots != nil {
		<-a.slots
	}
}

// admitFresh waits for the module's code (a compile on demand holds no
// slot) and then for a slot, unless Prepare already did, and returns what
// gives both back. The slot covers instantiation and the call: the span
// that costs CPU and an instance's memory.
func (m *Module) admitFresh(ctx context.Context) (func(), error) {
	if takeSlot(ctx, m) {
		// Prepare waited for both under the caller's deadline, and gives
		// them back when the dispatcher's attempt is over.
		return func() {}, nil
	}
	if _, err := m.acquireCode(ctx); err != nil {
		return nil, err
	}
	if err := m.rt.admit.enter(ctx); err != nil {
		m.releaseCode()
		return nil, err
	}
	return func() {
		m.rt.admit.leave()
		m.releaseCode()
	}, nil
}

// AdmissionStats is what the bound on fresh instances has done.
type AdmissionStats struct {
	// Limit is Config.MaxFresh (0: no bound).
	Limit int
	// InUse is how many fresh instances are being made or run now, and
	// Peak the most at once so far.
	InUse, Peak int64
	// Queued is how many calls wait for a slot now; Waited counts the
	// calls that waited at all, and Starved those whose context ended
	// while they waited.
	Queued          int64
	Waited, Starved uint64
}

// AdmissionStats returns the admission counts so far.
func (r *Runtime) AdmissionStats() AdmissionStats {
	a := r.admit
	a.mu.Lock()
	peak := a.peak
	a.mu.Unlock()
	return AdmissionStats{Limit: cap(a.slots), InUse: a.inUse.Load(), Peak: peak,
		Queued: a.queueLen.Load(), Waited: a.waited.Load(), Starved: a.starved.Load()}
}
