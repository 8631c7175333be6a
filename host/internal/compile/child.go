// Package compile guards compiling untrusted modules, which wazero does
// without a deadline, a memory bound or any doubt about its file cache:
// Child compiles a module first in a child process under CPU and memory
// limits (and marks the modules it compiled, so a restart skips it);
// Guard checks the file cache's entries before wazero reads them. It is
// host's alone.
package compile

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/toolhost/toolhost/third_party/wazero"
	"github.com/toolhost/toolhost/third_party/wazero/experimental"
)

// Defaults for Limits fields left at zero.
const (
	// DefaultCPU bounds the CPU time of compiling one module. A Go
	// guest compiles in about a second of CPU (15 s under the race
	// detector); a module of 100,000 nested blocks (300 KB) took 2.5
	// minutes. CPU time, not wall time, so that a loaded machine does not
	// refuse good modules.
	DefaultCPU = 60 * time.Second
	// compileWallFactor sets the wall-clock backstop: this many times the
	// CPU limit (a child starved of CPU, or stuck, is ended too).
	compileWallFactor = 10
	// DefaultMemory bounds the memory of the compiler process. A
	// Go guest compiles in well under 512 MiB; a 1 MB br_table reached
	// 2.4 GB.
	DefaultMemory = 2 << 30
)

// ChildEnv, set to "1" in a process's environment, makes it a compiler
// child: a program that calls ChildMain first thing when it is set can
// serve as Limits.Command (toolhost does).
const ChildEnv = "TOOLHOST_COMPILE_CHILD"

// Further parameters of the child, by environment.
const (
	compileCacheEnv   = "TOOLHOST_COMPILE_CACHE"
	compileMemoryEnv  = "TOOLHOST_COMPILE_MEMORY"
	compileCPUEnv     = "TOOLHOST_COMPILE_CPU"
	compileWorkersEnv = "TOOLHOST_COMPILE_WORKERS"
)

// Exit codes of a compiler child.
const (
	childCompiled    = 0
	childModuleError = 1 // the module does not compile: the runtime says why
	childOutOfMemory = 3 // over the memory limit
	childOutOfCPU    = 4 // over the CPU time limit
)

// Limits bound compiling a module, which wazero does without a
// deadline or a memory bound (issue 10 finding 5: a 300 KB module of nested
// blocks compiled for 2.5 minutes, a 1 MB br_table grew to 2.4 GB). With a
// Command, each module is first compiled in a child process under a
// deadline and a memory limit; a child that runs out of either
// refuses the module, and one that compiles has filled the file cache, from
// which the runtime then loads. The zero value compiles in this process,
// unbounded.
type Limits struct {
	// Command is the child's argv: a program that calls ChildMain
	// when ChildEnv is set (toolhost: its own executable). Empty
	// means no child.
	Command []string
	// CPUTime bounds the CPU time of one compile; 0 means
	// DefaultCPU. Wall time is bounded at ten times this.
	CPUTime time.Duration
	// MemoryBytes caps the memory the child's Go runtime maps; 0 means
	// DefaultMemory.
	MemoryBytes uint64
}

// LimitError is a module refused because compiling it ran out of time or
// memory.
type LimitError struct {
	Reason string
}

func (e *LimitError) Error() string { return e.Reason }

// Child compiles modules in child processes under Limits. It is safe for
// concurrent use.
type Child struct {
	lim      Limits
	cacheDir string        // "" when there is no file cache
	id       string        // the child and its limits, for the marks (mark.go)
	started  atomic.Uint64 // children started
	running  Running       // children compiling now, for their workers
}

// NewChild returns the compiler of modules under lim, whose children fill
// the file cache in cacheDir ("" for none). With no Command it starts no
// child, and Compile returns nil at once.
func NewChild(lim Limits, cacheDir string) *Child {
	if lim.CPUTime <= 0 {
		lim.CPUTime = DefaultCPU
	}
	if lim.MemoryBytes == 0 {
		lim.MemoryBytes = DefaultMemory
	}
	return &Child{lim: lim, cacheDir: cacheDir, id: identity(lim)}
}

// Started counts the compiler children started so far.
func (c *Child) Started() uint64 { return c.started.Load() }

// Marked reports whether a compiler child compiled the module whose file's
// bytes have the sha256 sum within these limits before, so that its next
// compile loads from the file cache (see mark): false with no child or no
// file cache, where nothing says.
func (c *Child) Marked(sum [sha256.Size]byte) bool {
	return len(c.lim.Command) > 0 && compiled(c.mark(sum))
}

// Compile compiles wasm, whose file's bytes have the sha256 sum, in a
// child under the limits. nil means it compiled (and the cache, if any,
// holds it), or that it failed as a module does: the runtime compiles it
// next and reports the module's own error. Otherwise the error is a
// *LimitError, or the context's.
func (c *Child) Compile(ctx context.Context, wasm []byte, sum [sha256.Size]byte) error {
	lim := c.lim
	if len(lim.Command) == 0 {
		return nil
	}
	mark := c.mark(sum)
	if compiled(mark) {
		return nil // compiled within these limits before (mark.go)
	}
	c.started.Add(1)
	workers, done := c.running.Begin(ctx)
	defer done()
	cpu, mem := lim.CPUTime, lim.MemoryBytes
	timeout := compileWallFactor * cpu
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(cctx, lim.Command[0], lim.Command[1:]...)
	cache := c.cacheDir
	if cache == "" {
		cache = "off"
	}
	cmd.Env = childEnv(cache, mem, cpu, workers)
	cmd.Stdin = bytes.NewReader(wasm)
	stderr := &tailBuffer{max: 4096}
	cmd.Stderr = stderr
	cmd.WaitDelay = time.Second
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
		markCompiled(mark)
		return nil
	case ctx.Err() != nil:
		return ctx.Err() // shutting down: not the module's fault
	case cctx.Err() != nil:
		return &LimitError{fmt.Sprintf("did not compile within %v of wall time (ten times the host's compile CPU limit); a module this slow to compile is refused", timeout)}
	case errors.As(err, &exit) && exit.ExitCode() == childOutOfCPU:
		return &LimitError{fmt.Sprintf("did not compile within %v of CPU time (the host's compile limit); a module this slow to compile is refused", cpu)}
	case errors.As(err, &exit) && exit.ExitCode() == childModuleError:
		return nil
	case errors.As(err, &exit) && exit.ExitCode() == childOutOfMemory:
		return &LimitError{fmt.Sprintf("compiling it needed more than %d MiB of memory (the host's compile limit); a module this costly to compile is refused", mem>>20)}
	}
	// Killed, or crashed (past the address-space backstop, the Go runtime
	// dies rather than reports): a module that does this is refused too.
	return &LimitError{fmt.Sprintf("the compiler process died compiling it (%v: %s)", err, lastLine(stderr.String()))}
}

// childRuntimeEnv are the variables of the server's environment a
// compiler child keeps: the Go runtime's own settings, which the operator
// set for the process (CPU and memory tuning, GODEBUG's compatibility
// switches, the race detector's and coverage's output in tests), and
// nothing else. The server's environment holds secrets (grant headers
// from {env = …}, $TOOLHOST_TOKENS, the OAuth client secret, the Redis
// password, OTEL headers), and the child parses untrusted bytes. It needs
// no HOME or TMPDIR: the cache folder is named by compileCacheEnv (the
// server resolved the default), and wazero's compiler writes nothing else.
var childRuntimeEnv = []string{"GOMAXPROCS", "GOGC", "GOMEMLIMIT", "GODEBUG", "GOTRACEBACK", "GORACE", "GOCOVERDIR"}

// childEnv is a compiler child's whole environment: its parameters, and
// childRuntimeEnv from this process's.
func childEnv(cache string, mem uint64, cpu time.Duration, workers int) []string {
	env := []string{ChildEnv + "=1", compileCacheEnv + "=" + cache,
		compileMemoryEnv + "=" + strconv.FormatUint(mem, 10), compileCPUEnv + "=" + strconv.FormatInt(int64(cpu), 10),
		compileWorkersEnv + "=" + strconv.Itoa(workers)}
	for _, k := range childRuntimeEnv {
		if v, ok := os.LookupEnv(k); ok {
			env = append(env, k+"="+v)
		}
	}
	return env
}

// ChildMain is the compiler child: it reads a module of at most maxBytes
// on stdin and compiles it into the file cache named by the environment,
// under the memory and CPU limits named there, and returns the exit code.
// Call it first thing in main when ChildEnv is "1".
func ChildMain(stdin io.Reader, stderr io.Writer, maxBytes int) int {
	mem, _ := strconv.ParseUint(os.Getenv(compileMemoryEnv), 10, 64)
	cpu, _ := strconv.ParseInt(os.Getenv(compileCPUEnv), 10, 64)
	go watch(mem, time.Duration(cpu), stderr)
	wasm, err := io.ReadAll(io.LimitReader(stdin, int64(maxBytes)+1))
	if err != nil || len(wasm) > maxBytes {
		fmt.Fprintln(stderr, "compile child: cannot read the module:", err)
		return childModuleError
	}
	workers, _ := strconv.Atoi(os.Getenv(compileWorkersEnv))
	ctx := WithWorkers(context.Background(), workers)
	// The same configuration as host.New's, so the cache key is the same.
	rc := wazero.NewRuntimeConfigCompiler().WithCloseOnContextDone(true)
	if dir := os.Getenv(compileCacheEnv); dir != "off" && dir != "" {
		cache, err := wazero.NewCompilationCacheWithDir(dir)
		if err == nil {
			rc = rc.WithCompilationCache(cache)
		}
	}
	rt := wazero.NewRuntimeWithConfig(ctx, rc)
	if _, err := rt.CompileModule(ctx, wasm); err != nil {
		fmt.Fprintln(stderr, "compile child:", err)
		return childModuleError
	}
	return childCompiled
}

// WithWorkers returns ctx asking wazero to compile a module's functions on
// n goroutines (n ≤ 1: one). A cold Go module is 2–3 s of compiler CPU on
// this project's machine, and a call that comes before its module's code
// waits for it: on two idle cores two workers halve that wait
// (2.3–2.9 s → 1.1–1.3 s, docs/BENCHMARKS.md) for the same CPU. wazero
// keeps the result byte for byte what one goroutine compiles (functions
// are placed and relocated in index order at the end), so the cache entry
// and the compile mark's "compiling is deterministic" still hold.
func WithWorkers(ctx context.Context, n int) context.Context {
	if n <= 1 {
		return ctx
	}
	return experimental.WithCompilationWorkers(ctx, n)
}

// Running counts the compiles in progress so each can be given its share
// of the CPUs: a cold start compiles several modules at once (the loader
// runs GOMAXPROCS loads), where workers per compile would only add
// threads and the workers' buffering, while a first call's compile often
// runs alone. The zero value is ready to use; it is safe for concurrent
// use.
type Running struct{ n atomic.Int32 }

// Begin counts a compile in and returns its workers, GOMAXPROCS divided
// among the compiles now running (at least one), and done, which counts
// it out. A compile keeps the share it started with. One whose ctx ends
// counts out then: a child whose compile was stopped is being killed, and
// the compile that stopped it (a call's, stopping the background ones:
// host/internal/resident) must find the CPUs free when it begins, a few
// milliseconds later, not when the killed child has been reaped.
func (r *Running) Begin(ctx context.Context) (workers int, done func()) {
	n := int(r.n.Add(1))
	var once sync.Once
	out := func() { once.Do(func() { r.n.Add(-1) }) }
	stop := context.AfterFunc(ctx, out)
	return max(1, runtime.GOMAXPROCS(0)/n), func() {
		stop()
		out()
	}
}

// watch ends the process once the memory the Go runtime has mapped passes
// mem (childOutOfMemory) or its CPU time passes cpu (childOutOfCPU); zero
// means no limit. It polls: an address-space limit (RLIMIT_AS) is no bound
// for a Go program, which reserves far more address space than it uses,
// and whose runtime crashes (rather than reports) when an mmap fails under
// one. wazero's compiler allocates as it goes, so 10 ms between looks lets
// little past the limit.
func watch(mem uint64, cpu time.Duration, stderr io.Writer) {
	sample := []metrics.Sample{{Name: "/memory/classes/total:bytes"}}
	for range time.Tick(10 * time.Millisecond) {
		metrics.Read(sample)
		if used := sample[0].Value.Uint64(); mem > 0 && used > mem {
			fmt.Fprintf(stderr, "compile child: out of memory: %d bytes in use, over the limit of %d\n", used, mem)
			os.Exit(childOutOfMemory)
		}
		if used := cpuTime(); cpu > 0 && used > cpu {
			fmt.Fprintf(stderr, "compile child: out of CPU time: %v used, over the limit of %v\n", used, cpu)
			os.Exit(childOutOfCPU)
		}
	}
}

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	max int
	buf []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.buf = append(t.buf, p...)
	if len(t.buf) > t.max {
		t.buf = t.buf[len(t.buf)-t.max:]
	}
	return len(p), nil
}

func (t *tailBuffer) String() string { return string(t.buf) }

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		return s[i+1:]
	}
	return s
}
