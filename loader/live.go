package loader

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"maps"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/toolhost/toolhost/host"
	"github.com/toolhost/toolhost/registry"
)

// Live is a plugins folder kept in step with its files: Rescan (or Watch)
// compiles new and changed modules off the request path and swaps a new
// registry in atomically. Calls in flight finish on the module they
// started with; a removed file removes its tools; a file that fails to
// load leaves the version before it serving. Live is safe for concurrent
// use, and is a dispatcher.Tools.
type Live struct {
	rt     *host.Runtime
	dir    string
	opts   Options
	logger *slog.Logger

	cur      atomic.Pointer[registry.Registry]
	inflight atomic.Int64

	// Compilations served by the file cache, and those it had to compile
	// (counted per rescan from the cache's entries; see CacheEntries).
	cacheHits, cacheMisses atomic.Uint64

	scanMu    sync.Mutex // one rescan at a time
	mu        sync.Mutex // guards the fields below; not held while compiling
	files     map[string]*liveFile
	rejected  map[string]string // path -> sha256 of bytes already refused
	reasons   map[string]string // path -> why its rejected (or untrusted) bytes were refused
	untrusted map[string]string // path -> sha256 of bytes the trust gate refused (trust.go), asked again each rescan
	loading   map[string]string // path -> sha256 a rescan is compiling now
	loaded    chan struct{}     // closed when loading empties; nil while it is empty
	stamps    map[string]stamp  // path -> size and mtime when last read
	listeners []func(*registry.Registry)
	started   bool // the first rescan (Open's) is over
	retry     bool // the last rescan could not read everything
	closed    bool // Close was called

	bg         *background // Options.Background's start; nil without it
	claims     *claims     // modules listed from their embedded manifests, checked in the background (verify.go)
	startTotal int         // module files the first rescan found

	owners *owners                              // who holds each tool name, across restarts
	fs     folderFS                             // how the folder is read
	after  func(time.Duration) <-chan time.Time // Watch's clock
}

// stamp is what a stat says of a file: enough to tell it has not been
// rewritten since it was read.
type stamp struct {
	size  int64
	mtime time.Time
}

type liveFile struct {
	sha    string
	ref    *moduleRef
	recs   []*registry.Tool
	offers registry.Offers // its resources and prompts (offers.go)
}

// Open loads dir and returns it live. logger receives reload outcomes (nil:
// slog.Default). The error is only for a folder that cannot be read.
func Open(ctx context.Context, rt *host.Runtime, dir string, opts Options, logger *slog.Logger) (*Live, error) {
	l, _, err := open(ctx, rt, dir, opts, logger)
	return l, err
}

// open is Open, also returning what the first scan did.
func open(ctx context.Context, rt *host.Runtime, dir string, opts Options, logger *slog.Logger) (*Live, *Change, error) {
	if logger == nil {
		logger = slog.Default()
	}
	if _, err := os.Stat(dir); err != nil {
		return nil, nil, fmt.Errorf("plugins folder: %w", err)
	}
	l := newLive(ctx, rt, dir, opts, logger)
	if opts.Background {
		l.bg = newBackground(ctx)
	}
	empty, _ := registry.New(nil)
	l.cur.Store(empty)
	ch, err := l.Rescan(ctx)
	var se *ScanError
	if errors.As(err, &se) && se.Listing == nil {
		// Files that could not be read are not refused: Watch retries
		// them. Say so at start-up beside the files that loaded.
		for _, p := range slices.Sorted(maps.Keys(se.Files)) {
			ch.Errors = append(ch.Errors, &host.LoadError{Path: p, Reason: "cannot read (will retry): " + se.Files[p].Error(), Err: se.Files[p]})
			if opts.Progress != nil {
				fmt.Fprintf(opts.Progress, "toolhost: skip %s: cannot read (will retry): %v\n", p, se.Files[p])
			}
		}
		err = nil
	}
	if err != nil {
		return nil, nil, err
	}
	return l, ch, nil
}

// newLive is the folder before its first scan, read from the file system.
func newLive(ctx context.Context, rt *host.Runtime, dir string, opts Options, logger *slog.Logger) *Live {
	return &Live{rt: rt, dir: dir, opts: opts, logger: logger,
		files: map[string]*liveFile{}, rejected: map[string]string{}, reasons: map[string]string{}, untrusted: map[string]string{},
		loading: map[string]string{}, claims: newClaims(ctx),
		fs: osFS, after: time.After, owners: loadOwners(opts.OwnersFile, logger)}
}

// Lookup finds a tool in the current registry.
func (l *Live) Lookup(name string) (*registry.Tool, bool) { return l.cur.Load().Lookup(name) }

// InFlight returns the number of calls running on this folder's modules,
// current and replaced versions alike.
func (l *Live) InFlight() int64 { return l.inflight.Load() }

// CacheStats returns how many module loads the compilation cache served
// and how many it had to compile, since Open.
func (l *Live) CacheStats() (hits, misses uint64) { return l.cacheHits.Load(), l.cacheMisses.Load() }

// serving returns the handler now serving the tool name, or nil.
func (l *Live) serving(name string) *boundTool {
	rec, ok := l.cur.Load().Lookup(name)
	if !ok {
		return nil
	}
	bt, _ := rec.Handler.(*boundTool)
	return bt
}

// Registry returns the current registry.
func (l *Live) Registry() *registry.Registry { return l.cur.Load() }

// OnChange registers f to run, with the new registry, after every swap.
// Listeners run on the rescanning goroutine, one swap at a time.
func (l *Live) OnChange(f func(*registry.Registry)) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.listeners = append(l.listeners, f)
}

// Follow is OnChange for a listener built from an earlier Registry(): it
// also runs f at once with the registry serving now, under the lock the
// swaps hold, so a swap made between that Registry() and the registration
// (a module loaded in the background in those microseconds) is not missed.
func (l *Live) Follow(f func(*registry.Registry)) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.listeners = append(l.listeners, f)
	f(l.cur.Load())
}

// Change is what one rescan did.
type Change struct {
	Loaded  []string                 // files (re)loaded and now serving
	Removed []string                 // files gone, with their tools
	Errors  []*host.LoadError        // files refused; any older version keeps serving
	Tools   map[string][]string      // file -> tool names, for loaded files
	Took    map[string]time.Duration // file -> compile and describe time
	// Deferred are loaded files listed from the describe cache: their code
	// compiles on their first call (host.Config.Lazy).
	Deferred []string
	// Background are the files of this change (loaded or refused) that
	// were compiled in the background after the start (Options.Background).
	Background []string
}

// Empty reports whether the rescan changed nothing.
func (c *Change) Empty() bool { return len(c.Loaded) == 0 && len(c.Removed) == 0 && len(c.Errors) == 0 }

// Rescan brings the registry in line with the folder. It reads each
// *.wasm file, loads those whose sha256 is new, and swaps once if anything
// changed. Only a listing that succeeded and lacks a file removes its
// tools: when the folder cannot be listed, or a file cannot be read, the
// error is a *ScanError, what could not be read keeps serving as it was,
// and the Change says what was applied of the rest.
func (l *Live) Rescan(ctx context.Context) (*Change, error) {
	l.scanMu.Lock()
	defer l.scanMu.Unlock()
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return &Change{}, ErrClosed
	}
	ch := &Change{Tools: map[string][]string{}, Took: map[string]time.Duration{}}
	paths, err := l.list()
	if err != nil {
		l.retry = true
		return ch, &ScanError{Dir: l.dir, Listing: err}
	}
	next := make(map[string]*liveFile, len(paths))
	unread := map[string]error{}
	keep := func(p string, err error) { // p could not be read: as it was
		unread[p] = err
		if old, ok := l.files[p]; ok {
			next[p] = old
		}
	}
	var fresh []string // paths whose bytes changed, to load
	bytesOf := map[string][]byte{}
	shaOf := map[string]string{}
	stamps := make(map[string]stamp, len(paths))
	seen := make(map[string]string, len(paths)) // path -> sha256 of the bytes there now
	refusedNow := map[string]bool{}             // serving files refused by their claims' verdicts (verify.go)
	for _, p := range paths {
		fi, err := l.fs.stat(p)
		if errors.Is(err, fs.ErrNotExist) {
			continue // gone since the listing (or a dangling symlink): not there
		}
		if err != nil {
			keep(p, err)
			continue
		}
		st := stamp{size: fi.Size(), mtime: fi.ModTime()}
		sha, known := "", st == l.stamps[p]
		if known {
			// Same size and modification time as when last read: the
			// bytes are the ones already loaded or refused. Go guests are
			// megabytes; do not hash the folder on every change.
			if u, ok := l.untrusted[p]; ok {
				if l.stillUntrusted(p, u) {
					stamps[p], seen[p] = st, u
					if old, ok := l.files[p]; ok {
						next[p] = old
					}
					continue
				}
				// Admitted now: read the bytes below, to load them.
			} else if f, ok := l.files[p]; ok {
				sha = f.sha
			} else if pending, ok := l.pendingSHA(p); ok {
				sha = pending
			} else {
				sha = l.rejected[p]
			}
		}
		var b []byte
		if sha == "" {
			if b, err = l.fs.readFile(p); errIsNotModule(err) {
				// A FIFO, a device, a directory: refused like bad bytes,
				// remembered by its stat, never read again as it is.
				stamps[p] = st
				if l.rejected[p] != notModule(st) {
					ch.Errors = append(ch.Errors, &host.LoadError{Path: p, Reason: err.Error(), Err: err})
				}
				l.rejected[p], l.reasons[p] = notModule(st), err.Error()
				if old, ok := l.files[p]; ok {
					next[p] = old
				}
				continue
			}
			if err != nil {
				keep(p, err)
				continue
			}
			sum := sha256.Sum256(b)
			sha = hex.EncodeToString(sum[:])
		}
		stamps[p] = st
		seen[p] = sha
		if old, ok := l.files[p]; ok && old.sha == sha {
			if le := l.claims.refused(p, sha); le != nil {
				// Listed from its embedded manifest, which its code
				// contradicted: its tools go.
				l.rejected[p], l.reasons[p] = sha, le.Reason
				ch.Errors = append(ch.Errors, le)
				refusedNow[p] = true
				continue
			}
			next[p] = old
			continue
		}
		if !l.trusted(p, sha, ch) {
			if old, ok := l.files[p]; ok {
				next[p] = old
			}
			continue
		}
		if l.rejected[p] == sha {
			if old, ok := l.files[p]; ok {
				next[p] = old
			}
			continue
		}
		if l.compilingInBackground(p, sha) {
			continue // listed (or refused) when its load is done
		}
		fresh = append(fresh, p)
		bytesOf[p], shaOf[p] = b, sha
	}
	l.stamps = stamps
	for p := range l.files {
		if _, ok := next[p]; !ok && !slices.Contains(fresh, p) && !refusedNow[p] {
			ch.Removed = append(ch.Removed, p)
		}
	}
	for p := range l.rejected {
		if _, ok := stamps[p]; !ok {
			delete(l.rejected, p) // the refused file is gone (or unread: read it again)
			delete(l.reasons, p)
		}
	}
	l.forgetUntrusted(stamps)
	if !l.started {
		l.startTotal = len(stamps)
		if l.bg != nil {
			l.bg.atStart = make(map[string]bool, len(stamps))
			for p := range stamps {
				l.bg.atStart[p] = true
			}
			l.bg.owners = maps.Clone(l.owners.names)
			fresh = l.deferCold(fresh, bytesOf, shaOf)
			l.reportDeferred()
		}
	}
	ready := l.takePreloaded(fresh, shaOf)
	for p := range ready {
		ch.Background = append(ch.Background, p)
	}
	if len(fresh) > 0 {
		// Compile off the lock (scanMu still keeps rescans one at a
		// time): compiling can take as long as the host's compile limit
		// allows, and Close (shutdown) and OnChange must not wait for it.
		l.startLoading(fresh, shaOf, ready)
		l.mu.Unlock()
		before, cached := l.rt.CacheEntries()
		loaded := l.compile(ctx, fresh, bytesOf, shaOf, ready)
		if after, _ := l.rt.CacheEntries(); cached {
			misses := max(after-before, 0)
			l.cacheMisses.Add(uint64(misses))
			l.cacheHits.Add(uint64(max(len(fresh)-len(ready)-misses, 0))) // loadBackground counted those
		}
		l.mu.Lock()
		defer l.endLoading()
		if l.closed {
			for _, r := range loaded {
				if r.mod != nil {
					_ = r.mod.Close(ctx)
				}
			}
			return ch, ErrClosed
		}
		// The recorded owner of a name goes first, so that a clash is
		// decided as it was before this start.
		for _, i := range l.owners.admitOrder(fresh, loaded) {
			l.admit(ctx, fresh[i], shaOf[fresh[i]], loaded[i], next, ch)
		}
	}
	if !ch.Empty() {
		l.swap(next, ch)
	}
	l.started = true
	l.settleBackground(seen, unread)
	l.retry = len(unread) > 0
	if l.retry {
		return ch, &ScanError{Dir: l.dir, Files: unread}
	}
	return ch, nil
}

type loadResult struct {
	mod  *host.Module
	err  error
	took time.Duration
}

// compile loads the changed files concurrently (compilation dominates a
// reload), bounded by the number of CPUs. A file loaded in the background
// already (ready) is not loaded again. bytesOf and shaOf are each file's
// bytes as the scan read them and their SHA-256 (hex), which the host
// takes instead of hashing them again.
func (l *Live) compile(ctx context.Context, paths []string, bytesOf map[string][]byte, shaOf map[string]string, ready map[string]loadResult) []loadResult {
	out := make([]loadResult, len(paths))
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	var wg sync.WaitGroup
	for i, p := range paths {
		if res, ok := ready[p]; ok {
			out[i] = res
			continue
		}
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			start := time.Now()
			m, err := l.rt.LoadHashed(ctx, p, bytesOf[p], knownSum(shaOf[p], bytesOf[p]))
			out[i] = loadResult{m, err, time.Since(start)}
		})
	}
	wg.Wait()
	return out
}

// admit puts a freshly loaded file in next, in place of any older version,
// if it loaded and its tool names are free (not claimed by another file in
// next). Otherwise the older version stays, and these bytes are remembered
// as refused so the next rescan does not retry them.
func (l *Live) admit(ctx context.Context, path, sha string, res loadResult, next map[string]*liveFile, ch *Change) {
	keepOld := func(le *host.LoadError) {
		ch.Errors = append(ch.Errors, le)
		l.rejected[path], l.reasons[path] = sha, le.Reason
		if old, ok := l.files[path]; ok {
			next[path] = old
		}
	}
	m, err := res.mod, res.err
	if err != nil {
		var le *host.LoadError
		if !errors.As(err, &le) {
			le = &host.LoadError{Path: path, Reason: err.Error(), Err: err}
		}
		keepOld(le)
		return
	}
	ref := &moduleRef{mod: m, total: &l.inflight, live: l}
	recs, err := records(m, ref, l.opts)
	if err != nil {
		_ = m.Close(ctx)
		keepOld(&host.LoadError{Path: path, Reason: err.Error(), Err: err})
		return
	}
	for {
		other, clash := claimed(recs, path, next)
		if clash == "" {
			break
		}
		if !l.outranksAtStart(path, recs, other, next[other].recs) {
			_ = m.Close(ctx)
			keepOld(&host.LoadError{Path: path, Reason: clash + "; the file that served the name first keeps it, across restarts too"})
			return
		}
		l.evictAtStart(other, path, recs, next, ch)
	}
	offers := offersOf(m, ref)
	if _, clash := offerClash(offers, path, next); clash != "" {
		_ = m.Close(ctx)
		keepOld(&host.LoadError{Path: path, Reason: clash})
		return
	}
	delete(l.rejected, path)
	delete(l.reasons, path)
	next[path] = &liveFile{sha: m.SHA256, ref: ref, recs: recs, offers: offers}
	if m.Unverified() {
		l.claims.check(l, path, m)
	}
	ch.Loaded = append(ch.Loaded, path)
	ch.Took[path] = res.took
	if !m.Resident() {
		ch.Deferred = append(ch.Deferred, path)
	}
	for _, t := range m.Tools {
		ch.Tools[path] = append(ch.Tools[path], t.Name)
	}
}

// claimed says which of recs' names another file in next already serves
// (the same manifest name, or a name on the wire that would mean two
// tools: see registry.New), and which file that is.
func claimed(recs []*registry.Tool, path string, next map[string]*liveFile) (other, reason string) {
	for _, other := range slices.Sorted(maps.Keys(next)) {
		if other == path {
			continue
		}
		for _, r := range next[other].recs {
			for _, t := range recs {
				if t.Name == r.Name {
					return other, fmt.Sprintf("tool %q is also declared by %s; tool names must be unique across the plugins folder", t.Name, other)
				}
			}
		}
	}
	for _, other := range slices.Sorted(maps.Keys(next)) {
		if other == path {
			continue
		}
		pair := append(slices.Clip(next[other].recs), recs...)
		var ce *registry.ClashError
		if _, err := registry.New(pair); errors.As(err, &ce) {
			return other, fmt.Sprintf("%v; the tool %q is served by %s", ce, ce.Other, other)
		}
	}
	return "", ""
}

// swap installs next: a new registry first, then modules no longer in use
// are retired (closed once their calls in flight return).
func (l *Live) swap(next map[string]*liveFile, ch *Change) {
	var tools []*registry.Tool
	for _, f := range next {
		tools = append(tools, f.recs...)
	}
	reg, err := registry.New(tools)
	if err == nil {
		reg, err = reg.WithOffers(mergeOffers(next))
	}
	if err != nil {
		// Cannot happen: names were checked for clashes and each record
		// compiled. Keep serving what we had rather than nothing.
		l.logger.Error("reload: building the registry failed; keeping the previous tools", "err", err)
		return
	}
	l.cur.Store(reg)
	l.owners.record(next)
	for p, old := range l.files {
		if f, ok := next[p]; !ok || f != old {
			old.ref.retire()
		}
	}
	l.files = next
	l.report(ch)
	for _, f := range l.listeners {
		f(reg)
	}
	l.listDynamic(ch)
}

// countTools is "1 tool" or "N tools", for the progress lines.
func countTools(n int) string {
	if n == 1 {
		return "1 tool"
	}
	return fmt.Sprintf("%d tools", n)
}

// report tells what a rescan did: as human progress lines at start-up
// (Options.Progress, one per file, like any server's boot log), and as
// structured log records for every reload after that.
func (l *Live) report(ch *Change) {
	if !l.started {
		// The first scan is start-up: the caller has the Change, and a
		// human the progress lines, if asked for; no log records.
		if l.opts.Progress == nil {
			return
		}
		// One line per file, in file order, loaded or skipped.
		lines := map[string]string{}
		for _, p := range ch.Loaded {
			lines[p] = fmt.Sprintf("toolhost: load %s: %s (%s) in %v", p, countTools(len(ch.Tools[p])),
				strings.Join(ch.Tools[p], ", "), ch.Took[p].Round(time.Millisecond))
			if m, ok := l.files[p].ref.mod.(*host.Module); ok && m.Unverified() {
				lines[p] += " (from its embedded manifest; compiles in the background, checked against its describe)"
			} else if slices.Contains(ch.Deferred, p) {
				lines[p] += " (from the describe cache; compiles on its first call)"
			}
		}
		for _, e := range ch.Errors {
			lines[e.Path] = fmt.Sprintf("toolhost: skip %s: %s", e.Path, e.Reason)
		}
		for _, p := range slices.Sorted(maps.Keys(lines)) {
			fmt.Fprintln(l.opts.Progress, lines[p])
		}
		return
	}
	l.reportBackground(ch)
	for _, p := range ch.Loaded {
		l.logger.Info("plugin loaded", "file", p, "sha256", l.files[p].sha, "tools", ch.Tools[p], "took", ch.Took[p])
	}
	for _, p := range ch.Removed {
		l.logger.Info("plugin removed", "file", p)
	}
	for _, e := range ch.Errors {
		l.logger.Warn("plugin refused; any previous version keeps serving", "file", e.Path, "reason", e.Reason)
	}
}

// ErrClosed is a rescan that ended because Close was called while it
// compiled: what it compiled is discarded.
var ErrClosed = errors.New("loader: the plugins folder was closed")

// Close retires every module; calls in flight finish first. It does not
// wait for a rescan's compiles: their modules are discarded.
func (l *Live) Close() {
	l.mu.Lock()
	l.closed = true
	for _, f := range l.files {
		f.ref.retire()
	}
	l.files = map[string]*liveFile{}
	l.mu.Unlock()
	l.claims.close()
	l.closeBackground()
}
