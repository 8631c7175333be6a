// Package host runs tool modules under wazero. It knows WebAssembly, not
// policy: it compiles modules once, checks them against the guest ABI,
// reads their manifests, and runs one call in a fresh, sandboxed instance.
// Timeouts, retries and idempotency belong to the dispatcher.
package host

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"time"

	"github.com/toolhost/toolhost/host/internal/compile"
	"github.com/toolhost/toolhost/host/internal/kick"
	"github.com/toolhost/toolhost/host/internal/membuf"
	"github.com/toolhost/toolhost/host/internal/resident"
	"github.com/toolhost/toolhost/host/internal/warm"
	"github.com/toolhost/toolhost/imports/extism"
	"github.com/toolhost/toolhost/imports/toolhostv1"
	"github.com/toolhost/toolhost/third_party/wazero"
	"github.com/toolhost/toolhost/third_party/wazero/imports/wasi_snapshot_preview1"
)

// Defaults for Config fields left at zero.
const (
	DefaultMemoryLimit     = 64 << 20        // bytes of linear memory per instance
	DefaultOutputLimit     = 1 << 20         // bytes of response JSON per call
	DefaultLogLimit        = 64 << 10        // bytes of guest stdout+stderr kept per call
	DefaultDescribeTimeout = 5 * time.Second // toolhost_describe and _initialize at load
)

// Config configures a Runtime. The zero value is usable: every field
// documents its default.
type Config struct {
	// CacheDir holds wazero's compilation cache so a restart skips
	// compiling. Empty means <user cache dir>/toolhost/wazero; "off"
	// disables the file cache (compiled code is still shared in memory).
	CacheDir string
	// Limits applies to every call unless a tool overrides it.
	Limits Limits
	// DescribeTimeout bounds toolhost_describe (and _initialize) at load;
	// 0 means 5 s.
	DescribeTimeout time.Duration
	// Logger receives guest output and load progress; nil means slog.Default.
	Logger *slog.Logger
	// Egress grants modules outbound HTTP through the toolhost_v1 host
	// functions (see toolhostv1.Egress); the zero value grants nothing.
	Egress toolhostv1.Egress
	// Compile bounds compiling each module (see CompileLimits); the zero
	// value compiles in this process, without bounds.
	Compile CompileLimits
	// Lazy loads a module described before (its describe cache entry,
	// kept beside the compilation cache) without compiling it: its tools
	// list at once and its code compiles on its first call, which waits
	// for it under its own deadline. Off, every load compiles.
	Lazy bool
	// WarmUp, with Lazy, compiles the modules listed from the describe
	// cache in the background after they load, a few at a time, so that
	// most first calls find their code ready; a call that comes first
	// waits for its module's compile as without it. It stops at
	// MaxResident.
	WarmUp bool
	// MaxFresh bounds how many fresh instances are made and run at once
	// for calls; the rest queue for a slot under their own deadline
	// (admit.go). 0 means no bound; about the number of CPUs keeps
	// latency and memory bounded when the CPU is saturated.
	MaxFresh int
	// MaxResident bounds how many tool modules keep their compiled code in
	// memory: past it, the idle ones used longest ago release theirs and
	// compile again (from the file cache) on their next call. 0 keeps
	// every module's.
	MaxResident int
	// ExtismConfig is each Extism plugin's config (what config_get reads),
	// by module file name; a plugin without an entry reads no keys.
	ExtismConfig map[string]map[string]string
	// ExtismKeyring is each Extism plugin's keyring (what hyper-mcp's
	// get_keyring_secret reads), by module file name, then the entry's
	// service, then its user; a plugin without an entry reads none.
	ExtismKeyring map[string]map[string]map[string]string
	// Snapshot names the modules, by file name, whose instances start from
	// a snapshot of their state after _initialize instead of running it
	// (see moduleSnapshot): a fresh Go call then costs a fraction, and
	// every instance starts with the same randomness, so a Go guest's
	// math/rand and map seeds repeat from call to call. Only for modules
	// known not to depend on them.
	Snapshot map[string]bool
	// Reuse configures warm instances for the tools that allow them (see
	// Reuse); the zero value is reuse on, within the default bounds.
	Reuse Reuse
	// Interpret runs the calls of a module whose code is not compiled, and
	// would not load from the file cache, on wazero's interpreter while its
	// compile runs, instead of waiting for it: a Go tool's first call
	// after a cold start then answers in a few hundred milliseconds rather
	// than its compile's seconds, about ten times slower than compiled
	// code. One module at a time, of at most MaxInterpretBytes, has an
	// interpreted form, held for as long as its compile runs; Extism
	// plugins and planners always wait. With Lazy, a cold module without a
	// manifest section is also listed from its describe on the
	// interpreter, uncompiled, rather than after its compile. It needs
	// Compile's child, whose marks tell a module never compiled from one
	// the file cache holds; without one it does nothing.
	Interpret bool
}

// Runtime is one wazero runtime shared by every module. It is safe for
// concurrent use.
type Runtime struct {
	rt       wazero.Runtime
	cache    wazero.CompilationCache
	cacheDir string         // "" when there is no file cache
	guard    *compile.Guard // nil when there is no file cache
	child    *compile.Child // compiles in a child under Config.Compile
	cfg      Config
	logger   *slog.Logger
	grants   *toolhostv1.Grants

	residents *resident.Set // modules with compiled code in memory, and compiles on demand
	// Counters for tests and metrics: modules compiled, loads served by
	// the describe cache.
	compiles, describeHits atomic.Uint64
	compiling              compile.Running                 // in-process compiles, for their workers
	admit                  *admission                      // Config.MaxFresh
	warm                   *warm.Pools[*Module, *instance] // warm instances (warm.go)
	settle                 *settler                        // frees loading's garbage (settle.go)
	mem                    *membuf.Budget                  // what modules' memory pools keep
	kick                   *kick.Kicker                    // wakes the scheduler at call deadlines; nil: none
	interp                 *interpreter                    // Config.Interpret (interp.go)
	interpForms            atomic.Uint64                   // interpreted forms made
	interpListed           atomic.Uint64                   // modules listed from a describe on the interpreter
}

// New creates the runtime: wazero's optimizing compiler, the file
// compilation cache, WithCloseOnContextDone always on (a call's deadline
// stops guest code even in a hot loop), and WASI preview 1 and
// toolhost_v1 instantiated once for every module to import.
func New(ctx context.Context, cfg Config) (*Runtime, error) {
	cfg.Limits = limitsWithDefaults(cfg.Limits, Limits{})
	if cfg.DescribeTimeout <= 0 {
		cfg.DescribeTimeout = DefaultDescribeTimeout
	}
	if len(cfg.Compile.Command) == 0 {
		// Without a child's marks a module in the file cache (a compile
		// of milliseconds) looks never compiled: it would be interpreted.
		cfg.Interpret = false
	}
	logger := cfg.Logger
	if logger == nil {
		logger = slog.Default()
	}
	grants, err := toolhostv1.NewGrants(cfg.Egress)
	if err != nil {
		return nil, fmt.Errorf("host: %w", err)
	}
	rc := wazero.NewRuntimeConfigCompiler().WithCloseOnContextDone(true)
	cache, cacheDir, err := openCache(cfg.CacheDir)
	if err != nil {
		// A cache that cannot be made (a read-only or full disk) only
		// costs compile time: run without it rather than refuse to start.
		logger.Warn("compilation cache unavailable; compiling every module afresh", "err", err)
		cache, cacheDir = nil, ""
	}
	var guard *compile.Guard
	if cache != nil {
		rc = rc.WithCompilationCache(cache)
		guard = compile.NewGuard(cacheDir, logger)
	}
	rt, err := newWazero(ctx, rc)
	if err != nil {
		return nil, err
	}
	settle := newSettler()
	return &Runtime{rt: rt, cache: cache, cacheDir: cacheDir, guard: guard, child: compile.NewChild(cfg.Compile, cacheDir), cfg: cfg, logger: logger, grants: grants,
		residents: resident.NewSet(cfg.MaxResident, runtime.GOMAXPROCS(0)/2, refusesForGood), admit: newAdmission(cfg.MaxFresh),
		warm: newWarmPools(cfg.Reuse, logger), settle: settle,
		mem: membuf.NewBudget(func() { settle.begin(); settle.end() }), kick: kick.New(), interp: newInterpreter()}, nil
}

// newWazero makes a wazero runtime with rc and the host modules every
// module may import: WASI preview 1, toolhost_v1 and Extism's env.
func newWazero(ctx context.Context, rc wazero.RuntimeConfig) (wazero.Runtime, error) {
	rt := wazero.NewRuntimeWithConfig(ctx, rc)
	if _, err := wasi_snapshot_preview1.Instantiate(ctx, rt); err != nil {
		_ = rt.Close(ctx)
		return nil, fmt.Errorf("host: instantiating WASI: %w", err)
	}
	if _, err := toolhostv1.Instantiate(ctx, rt); err != nil {
		_ = rt.Close(ctx)
		return nil, fmt.Errorf("host: instantiating %s: %w", toolhostv1.ModuleName, err)
	}
	if err := extism.Instantiate(ctx, rt); err != nil {
		_ = rt.Close(ctx)
		return nil, fmt.Errorf("host: instantiating %s: %w", extism.EnvModule, err)
	}
	return rt, nil
}

func openCache(dir string) (wazero.CompilationCache, string, error) {
	switch dir {
	case "off":
		return nil, "", nil
	case "":
		base, err := os.UserCacheDir()
		if err != nil {
			// No home to cache into (a bare container): run uncached
			// rather than refuse to start.
			return nil, "", nil
		}
		dir = filepath.Join(base, "toolhost", "wazero")
	}
	cache, err := wazero.NewCompilationCacheWithDir(dir)
	if err != nil {
		return nil, "", fmt.Errorf("host: compilation cache %s: %w", dir, err)
	}
	return cache, dir, nil
}

// compileWasm compiles wasm through the file cache, which is never a
// reason to refuse a module: a damaged entry is deleted and the module
// compiled again, and a cache that cannot be written is bypassed with a
// warning (wazero has already kept the compiled code in memory when its
// write fails, so compiling again takes it from there). Its errors are the
// module's own, or a *CacheError.
func (r *Runtime) compileWasm(ctx context.Context, path string, wasm []byte) (wazero.CompiledModule, error) {
	workers, done := r.compiling.Begin(ctx)
	defer done()
	ctx = compile.WithWorkers(ctx, workers)
	if r.guard == nil {
		return r.rt.CompileModule(ctx, wasm)
	}
	r.guard.Sweep(false) // what changed since the last compile, before wazero reads it
	var err error
	for attempt := range 3 {
		var c wazero.CompiledModule
		if c, err = r.rt.CompileModule(ctx, wasm); err == nil {
			return c, nil
		}
		if !compile.IsCacheError(err) || ctx.Err() != nil {
			return nil, err
		}
		if !strings.HasPrefix(err.Error(), "compilationcache:") {
			// The file system refused a read or a write (a full disk):
			// wazero kept the compiled code in memory; take it from there.
			r.logger.Warn("compilation cache cannot be read or written; the module is compiled in memory only",
				"file", path, "err", err)
			continue
		}
		n := 0
		if attempt == 0 {
			n = r.guard.Sweep(true)
		}
		r.logger.Warn("compilation cache: an entry could not be used; compiling the module again",
			"file", path, "err", err, "damaged_entries_deleted", n)
	}
	return nil, &CacheError{Dir: r.cacheDir, Err: err}
}

// CacheDir returns the file compilation cache's folder, or "" when there
// is none.
func (r *Runtime) CacheDir() string { return r.cacheDir }

// CacheEntries counts the compiled modules in the file compilation cache
// (false when there is none). wazero writes one file per module it had to
// compile, during compilation, so the difference across a batch of loads is
// the batch's cache misses; wazero offers no hit counter of its own.
func (r *Runtime) CacheEntries() (int, bool) {
	if r.guard == nil {
		return 0, false
	}
	return r.guard.Entries(), true
}

// Close releases every compiled module and the cache handle. Calls in flight
// fail.
func (r *Runtime) Close(ctx context.Context) error {
	r.residents.Close()
	r.kick.Close()
	r.mem.Close()
	r.settle.stop()
	r.warm.Close()
	r.grants.Close()
	err := r.rt.Close(ctx)
	if ierr := r.interp.close(ctx); err == nil {
		err = ierr
	}
	if r.cache != nil {
		if cerr := r.cache.Close(ctx); err == nil {
			err = cerr
		}
	}
	return err
}
