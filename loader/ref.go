package loader

import (
	"context"
	"sync"
	"sync/atomic"
)

// closer is what a moduleRef closes: a *host.Module.
type closer interface {
	Close(ctx context.Context) error
}

// moduleRef counts calls in flight on a module so that a module replaced
// by a reload is closed only after the calls that started on it finish.
type moduleRef struct {
	mod   closer
	total *atomic.Int64 // the folder's calls in flight, for InFlight; may be nil
	live  *Live         // the folder serving the module, for a call that lost a race with its reload

	mu       sync.Mutex
	inflight int
	retired  bool
	closed   bool
}

// acquire registers a call; false means the module is already closed.
func (r *moduleRef) acquire() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return false
	}
	r.inflight++
	if r.total != nil {
		r.total.Add(1)
	}
	return true
}

func (r *moduleRef) release() {
	r.mu.Lock()
	r.inflight--
	if r.total != nil {
		r.total.Add(-1)
	}
	closeNow := r.retired && r.inflight == 0 && !r.closed
	if closeNow {
		r.closed = true
	}
	r.mu.Unlock()
	if closeNow {
		_ = r.mod.Close(context.Background())
	}
}

// retire marks the module replaced: it closes now if idle, else when its
// last call returns.
func (r *moduleRef) retire() {
	r.mu.Lock()
	r.retired = true
	closeNow := r.inflight == 0 && !r.closed
	if closeNow {
		r.closed = true
	}
	r.mu.Unlock()
	if closeNow {
		_ = r.mod.Close(context.Background())
	}
}
