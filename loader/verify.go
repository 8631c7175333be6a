package loader

import (
	"context"
	"errors"
	"runtime"
	"sync"

	"github.com/toolhost/toolhost/host"
)

// claims checks, in the background, the modules listed from their
// toolhost.manifest section (host.Module.Unverified): each compiles, a
// few at a time (GOMAXPROCS), and one whose code contradicts its section
// is refused by a rescan of its own, its tools unlisted. A call that comes
// first does not wait for a slot here: it compiles the module itself, and
// the check joins that compile.
type claims struct {
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
	sem    chan struct{}

	// Guarded by Live.mu.
	verdicts map[string]verdict // path -> the refusal of the bytes sha
}

type verdict struct {
	sha string
	err *host.LoadError
}

func newClaims(ctx context.Context) *claims {
	cctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	return &claims{ctx: cctx, cancel: cancel, sem: make(chan struct{}, runtime.GOMAXPROCS(0)), verdicts: map[string]verdict{}}
}

// check starts checking m, just admitted for path. Called with l.mu held.
func (c *claims) check(l *Live, path string, m *host.Module) {
	c.wg.Go(func() {
		select {
		case c.sem <- struct{}{}:
		case <-c.ctx.Done():
			return
		}
		err := m.Verify(c.ctx)
		<-c.sem
		var ce *host.ClaimError
		if !errors.As(err, &ce) || c.ctx.Err() != nil {
			return // it agrees, or nothing is known against it (the file changed: a rescan has it)
		}
		l.mu.Lock()
		c.verdicts[path] = verdict{sha: m.SHA256, err: &host.LoadError{Path: path, Reason: ce.Reason + "; its tools are no longer listed", Err: err}}
		l.mu.Unlock()
		if _, err := l.Rescan(c.ctx); err != nil && c.ctx.Err() == nil && !errors.Is(err, ErrClosed) {
			l.logger.Warn("refusing a module whose embedded manifest its code contradicts: the rescan could not read everything; it is retried", "file", path, "err", err)
		}
	})
}

// refused returns the refusal found for path holding the bytes sha, once,
// or nil. Called with l.mu held.
func (c *claims) refused(path, sha string) *host.LoadError {
	v, ok := c.verdicts[path]
	if !ok || v.sha != sha {
		return nil
	}
	delete(c.verdicts, path)
	return v.err
}

// close ends the checks and waits for them. Called without l.mu.
func (c *claims) close() {
	c.cancel()
	c.wg.Wait()
}

// startLoading records the files a rescan is about to compile (ready ones
// are compiled already), so that Files says they are compiling and
// AwaitLoading waits for them. Called with l.mu held.
func (l *Live) startLoading(fresh []string, shaOf map[string]string, ready map[string]loadResult) {
	for _, p := range fresh {
		if _, done := ready[p]; !done {
			l.loading[p] = shaOf[p]
		}
	}
	if len(l.loading) > 0 && l.loaded == nil {
		l.loaded = make(chan struct{})
	}
}

// endLoading clears what startLoading recorded, after the rescan's swap.
// Called with l.mu held.
func (l *Live) endLoading() {
	clear(l.loading)
	if l.loaded != nil {
		close(l.loaded)
		l.loaded = nil
	}
}

// AwaitLoading waits, under ctx, until no module file of the folder is
// compiling to be listed: the start's background loads (Options.
// Background) and any rescan's. A caller that did not find a tool asks
// again after it: the tool may be in a file that was compiling. False:
// ctx ended first.
func (l *Live) AwaitLoading(ctx context.Context) bool {
	for {
		l.mu.Lock()
		var wait <-chan struct{}
		switch {
		case l.loaded != nil:
			wait = l.loaded
		case l.bg != nil && !l.bg.done:
			wait = l.bg.listed
		}
		l.mu.Unlock()
		if wait == nil {
			return true
		}
		select {
		case <-wait:
		case <-ctx.Done():
			return false
		}
	}
}
