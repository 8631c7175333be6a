package host

import (
	"io"

	"github.com/toolhost/toolhost/host/internal/compile"
)

// Defaults for CompileLimits fields left at zero (host/internal/compile
// says why these).
const (
	// DefaultCompileCPU bounds the CPU time of compiling one module; wall
	// time is bounded at ten times it.
	DefaultCompileCPU = compile.DefaultCPU
	// DefaultCompileMemory bounds the memory of the compiler process.
	DefaultCompileMemory = compile.DefaultMemory
)

// CompileChildEnv, set to "1" in a process's environment, makes it a
// compiler child: a program that calls CompileChildMain first thing when
// it is set can serve as CompileLimits.Command (toolhost does).
const CompileChildEnv = compile.ChildEnv

// CompileLimits bound compiling a module, which wazero does without a
// deadline or a memory bound. With a Command, each module is first
// compiled in a child process under a CPU-time and a memory limit; a
// child that runs out of either refuses the module (a *CompileLimitError),
// and one that compiles has filled the file cache, from which the runtime
// then loads. The zero value compiles in this process, unbounded.
type CompileLimits = compile.Limits

// CompileLimitError is a module refused because compiling it ran out of
// time or memory.
type CompileLimitError = compile.LimitError

// CompileChildMain is the compiler child: it reads a module on stdin and
// compiles it into the file cache named by the environment, under the
// limits named there, and returns the exit code. Call it first thing in
// main when CompileChildEnv is "1".
func CompileChildMain(stdin io.Reader, stderr io.Writer) int {
	return compile.ChildMain(stdin, stderr, MaxModuleBytes)
}
