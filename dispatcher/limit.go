package dispatcher

import (
	"context"
	"errors"
	"sync"
	"time"
)

// limiter caps executions in flight, per tool and in all. A caller beyond a
// cap waits in line (Go channel senders are served roughly in order), for
// no longer than its own deadline or the queue timeout.
type limiter struct {
	perTool      func(tool string) int
	global       chan struct{}
	queueTimeout time.Duration

	mu    sync.Mutex
	tools map[string]chan struct{}
}

func newLimiter(global int, queueTimeout time.Duration, perTool func(string) int) *limiter {
	return &limiter{perTool: perTool, global: make(chan struct{}, global), queueTimeout: queueTimeout,
		tools: make(map[string]chan struct{})}
}

func (l *limiter) sem(tool string) chan struct{} {
	l.mu.Lock()
	defer l.mu.Unlock()
	s, ok := l.tools[tool]
	if !ok {
		s = make(chan struct{}, l.perTool(tool))
		l.tools[tool] = s
	}
	return s
}

// acquire takes a slot for tool and then a global one. It returns the
// tool's semaphore, to hand back to release, or a *DispatchError when the
// wait runs out. (No release closure: this is the hot path.)
func (l *limiter) acquire(ctx context.Context, tool string, attempts int) (chan struct{}, *DispatchError) {
	ts := l.sem(tool)
	// Fast path: free slots, no timer.
	select {
	case ts <- struct{}{}:
		select {
		case l.global <- struct{}{}:
			return ts, nil
		default:
			<-ts
		}
	default:
	}
	return l.wait(ctx, ts, tool, attempts)
}

func (l *limiter) release(ts chan struct{}) {
	<-l.global
	<-ts
}

func (l *limiter) wait(ctx context.Context, ts chan struct{}, tool string, attempts int) (chan struct{}, *DispatchError) {
	t := time.NewTimer(l.queueTimeout)
	defer t.Stop()
	full := func(which string, cap int) *DispatchError {
		if ctx.Err() != nil {
			return newError(KindTimeout, attempts, errQueueWait,
				"tool %s: the caller's deadline passed while waiting for a free %s slot (%d in flight)", tool, which, cap)
		}
		return newError(KindTimeout, attempts, errQueueWait,
			"tool %s: waited %v for a free %s slot (%d in flight); the server is at its concurrency limit", tool, l.queueTimeout, which, cap)
	}
	select {
	case ts <- struct{}{}:
	case <-ctx.Done():
		return nil, full("per-tool", cap(ts))
	case <-t.C:
		return nil, full("per-tool", cap(ts))
	}
	select {
	case l.global <- struct{}{}:
		return ts, nil
	case <-ctx.Done():
		<-ts
		return nil, full("global", cap(l.global))
	case <-t.C:
		<-ts
		return nil, full("global", cap(l.global))
	}
}

// errQueueWait is the cause of a timeout spent waiting for a slot: the tool
// never ran, so the breaker does not count it and it is not retried.
var errQueueWait = errors.New("no free concurrency slot in time")
