package loader

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"maps"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/toolhost/toolhost/host"
	"github.com/toolhost/toolhost/registry"
)

// background is Open's start with Options.Background: the modules the
// runtime cannot list at once (not in its describe cache) compile off the
// start, each listed by a rescan of its own when it is done, so that a
// server listens, and lists every module described before, at once.
type background struct {
	ctx    context.Context // ended by Close
	cancel context.CancelFunc
	wg     sync.WaitGroup
	sem    chan struct{}

	// Guarded by Live.mu.
	pending   map[string]string  // path -> sha256 compiling, not yet listed or refused
	preloaded map[string]preload // path -> its finished load, for the rescan that admits it
	atStart   map[string]bool    // the module files present at start
	owners    map[string]string  // the owners record as it was at start
	listed    chan struct{}      // closed once nothing that was there at start is pending
	done      bool               // listed is closed
}

// backgroundHook, set by tests only, runs before each background load.
var backgroundHook func(context.Context)

// preload is a module loaded in the background, by its file's sha256.
type preload struct {
	sha string
	res loadResult
}

func newBackground(ctx context.Context) *background {
	bctx, cancel := context.WithCancel(ctx)
	return &background{ctx: bctx, cancel: cancel, sem: make(chan struct{}, runtime.GOMAXPROCS(0)),
		pending: map[string]string{}, preloaded: map[string]preload{}, listed: make(chan struct{})}
}

// deferCold takes the files of the first scan that would compile (the
// runtime has no describe cache entry for them) out of fresh, and starts
// loading them in the background. It returns what is left to load now.
// Called with l.mu held.
func (l *Live) deferCold(fresh []string, bytesOf map[string][]byte, shas map[string]string) []string {
	var now []string
	for _, p := range fresh {
		if l.rt.Listable(shas[p], bytesOf[p]) {
			now = append(now, p)
			continue
		}
		sha, b := shas[p], bytesOf[p]
		l.bg.pending[p] = sha
		l.bg.wg.Go(func() { l.loadBackground(p, sha, b) })
	}
	return now
}

// loadBackground loads one cold module and has it admitted by a rescan,
// which takes the loaded module instead of compiling the file again (if
// the file still holds those bytes; else the module is discarded).
func (l *Live) loadBackground(path, sha string, b []byte) {
	bg := l.bg
	select {
	case bg.sem <- struct{}{}:
	case <-bg.ctx.Done():
		return
	}
	if backgroundHook != nil {
		backgroundHook(bg.ctx)
	}
	start := time.Now()
	before, cached := l.rt.CacheEntries()
	m, err := l.rt.LoadHashed(bg.ctx, path, b, knownSum(sha, b))
	if after, _ := l.rt.CacheEntries(); cached {
		// Loads run side by side: a new entry is counted as this one's
		// miss, at most one.
		if after > before {
			l.cacheMisses.Add(1)
		} else {
			l.cacheHits.Add(1)
		}
	}
	<-bg.sem
	l.mu.Lock()
	if l.closed || bg.ctx.Err() != nil || bg.pending[path] != sha {
		// Closed or shutting down (a load cut short is no verdict on the
		// module), or the file changed (a rescan loaded the new bytes).
		l.mu.Unlock()
		if m != nil {
			_ = m.Close(context.Background())
		}
		return
	}
	bg.preloaded[path] = preload{sha: sha, res: loadResult{m, err, time.Since(start)}}
	l.mu.Unlock()
	if _, err := l.Rescan(bg.ctx); err != nil && bg.ctx.Err() == nil {
		l.logger.Warn("listing a module compiled in the background: the rescan could not read everything; it is retried", "file", path, "err", err)
	}
}

// takePreloaded removes from fresh the files whose background load is
// done for the bytes found now, and returns their results. Called with
// l.mu held.
func (l *Live) takePreloaded(fresh []string, shas map[string]string) map[string]loadResult {
	if l.bg == nil {
		return nil
	}
	ready := map[string]loadResult{}
	for _, p := range fresh {
		if pre, ok := l.bg.preloaded[p]; ok && pre.sha == shas[p] {
			ready[p] = pre.res
			delete(l.bg.preloaded, p)
			delete(l.bg.pending, p)
		}
	}
	return ready
}

// settleBackground, at the end of a rescan that saw the folder as seen
// (path -> sha256) but could not read unread, forgets the pending files
// that are gone or changed (the rescan loaded the new bytes), discards
// their loads, and says once when nothing that was there at start is
// pending any more. Called with l.mu held.
func (l *Live) settleBackground(seen map[string]string, unread map[string]error) {
	bg := l.bg
	if bg == nil {
		return
	}
	for p, sha := range bg.pending {
		if _, unknown := unread[p]; !unknown && seen[p] != sha {
			delete(bg.pending, p)
		}
	}
	for p, pre := range bg.preloaded {
		if bg.pending[p] != pre.sha {
			delete(bg.preloaded, p)
			if pre.res.mod != nil {
				_ = pre.res.mod.Close(context.Background())
			}
		}
	}
	if len(bg.pending) == 0 && !bg.done {
		bg.done = true
		close(bg.listed)
	}
}

// Starting says how many module files were in the folder at start and
// how many of them are still compiling in the background (Options.
// Background), neither listed nor refused yet.
func (l *Live) Starting() (pending, total int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.bg == nil {
		return 0, l.startTotal
	}
	return len(l.bg.pending), l.startTotal
}

// Listed returns a channel closed once every module file present at start
// is listed or refused: at once without Options.Background.
func (l *Live) Listed() <-chan struct{} {
	if l.bg == nil {
		return closedChan
	}
	return l.bg.listed
}

var closedChan = func() chan struct{} { c := make(chan struct{}); close(c); return c }()

// StartingNote is what a readiness probe says while modules present at
// start are still compiling in the background, or "" once none is.
func (l *Live) StartingNote() string {
	pending, total := l.Starting()
	if pending == 0 {
		return ""
	}
	return fmt.Sprintf("starting: %d of %d modules listed, %d compiling", total-pending, total, pending)
}

// pendingSHA is the sha256 of p's bytes when p is compiling in the
// background: a rescan need not hash it again.
func (l *Live) pendingSHA(p string) (string, bool) {
	if l.bg == nil {
		return "", false
	}
	sha, ok := l.bg.pending[p]
	return sha, ok
}

// compilingInBackground says whether a rescan finding sha in p leaves it
// to its background load, not done yet.
func (l *Live) compilingInBackground(p, sha string) bool {
	if l.bg == nil || l.bg.pending[p] != sha {
		return false
	}
	pre, done := l.bg.preloaded[p]
	return !done || pre.sha != sha
}

// reportDeferred writes the start's progress line for each module left to
// load in the background: compiled, or described on the interpreter
// (host.Config.Interpret), then listed.
func (l *Live) reportDeferred() {
	if l.opts.Progress == nil {
		return
	}
	for _, p := range slices.Sorted(maps.Keys(l.bg.pending)) {
		fmt.Fprintf(l.opts.Progress, "toolhost: load %s in the background (not in the describe cache); its tools are listed when it is done\n", p)
	}
}

// reportBackground writes the progress line of each module whose
// background load this change lists or refuses, with how many of the
// start's modules are listed now.
func (l *Live) reportBackground(ch *Change) {
	if l.opts.Progress == nil || len(ch.Background) == 0 {
		return
	}
	left := len(l.bg.pending) // takePreloaded took these out
	for _, p := range slices.Sorted(slices.Values(ch.Background)) {
		line := fmt.Sprintf("toolhost: load %s: %s (%s) in %v, loaded in the background", p, countTools(len(ch.Tools[p])),
			strings.Join(ch.Tools[p], ", "), ch.Took[p].Round(time.Millisecond))
		for _, e := range ch.Errors {
			if e.Path == p {
				line = fmt.Sprintf("toolhost: skip %s: %s", p, e.Reason)
			}
		}
		fmt.Fprintf(l.opts.Progress, "%s (%d of %d modules listed)\n", line, l.startTotal-left, l.startTotal)
	}
}

// outranksAtStart says whether path, compiled in the background, takes a
// tool name from other, listed earlier in the same start: the start
// decides a clash as if every module had loaded at once (see
// owners.admitOrder): the file the record names as an owner of one of its
// tools first, then file name order. After the start, the file serving a
// name keeps it. Called with l.mu held.
func (l *Live) outranksAtStart(path string, recs []*registry.Tool, other string, otherRecs []*registry.Tool) bool {
	bg := l.bg
	if bg == nil || !bg.atStart[path] || !bg.atStart[other] {
		return false
	}
	owns := func(p string, recs []*registry.Tool) bool {
		for _, r := range recs {
			if bg.owners[r.Name] == filepath.Base(p) {
				return true
			}
		}
		return false
	}
	if a, b := owns(path, recs), owns(other, otherRecs); a != b {
		return a
	}
	return path < other
}

// evictAtStart refuses other, listed earlier in the start, for path (its
// records recs), which outranks it (outranksAtStart): with the refusal a
// start that loaded both at once would have written. Called with l.mu
// held.
func (l *Live) evictAtStart(other, path string, recs []*registry.Tool, next map[string]*liveFile, ch *Change) {
	f := next[other]
	delete(next, other)
	_, clash := claimed(f.recs, other, map[string]*liveFile{path: {recs: recs}})
	reason := clash + "; the file that served the name first keeps it, across restarts too"
	l.rejected[other], l.reasons[other] = f.sha, reason
	ch.Errors = append(ch.Errors, &host.LoadError{Path: other, Reason: reason})
	ch.Background = append(ch.Background, other)
}

// closeBackground ends the background loads and waits for them (a load in
// progress ends with its compile). Called without l.mu.
func (l *Live) closeBackground() {
	if l.bg == nil {
		return
	}
	l.bg.cancel()
	l.bg.wg.Wait()
	l.mu.Lock()
	pre := l.bg.preloaded
	l.bg.preloaded = map[string]preload{}
	l.mu.Unlock()
	for _, p := range pre {
		if p.res.mod != nil {
			_ = p.res.mod.Close(context.Background())
		}
	}
}

// knownSum is the SHA-256 a scan computed for b, in hex, as the bytes
// host.LoadHashed takes, so a module's bytes are hashed once per load; b is
// hashed again only if sha is not one.
func knownSum(sha string, b []byte) [sha256.Size]byte {
	var sum [sha256.Size]byte
	if n, err := hex.Decode(sum[:], []byte(sha)); err != nil || n != len(sum) {
		return sha256.Sum256(b)
	}
	return sum
}
