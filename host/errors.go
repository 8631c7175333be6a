package host

import "fmt"

// LoadError says why a module file was not loaded. The other modules in the
// folder still load.
type LoadError struct {
	// Path is the module file.
	Path string
	// Reason says what is wrong, specifically enough to fix it.
	Reason string
	// Err is the underlying error, if any.
	Err error
}

func (e *LoadError) Error() string {
	return e.Path + ": " + e.Reason
}

func (e *LoadError) Unwrap() error { return e.Err }

// Fault is a call that failed because the guest broke the ABI or crashed:
// a trap, an exit, an out-of-bounds pointer, invalid JSON, an oversized
// response. The caller treats it as an internal error; the host keeps
// serving.
type Fault struct {
	Module string
	Tool   string
	Reason string
	Err    error
}

func (e *Fault) Error() string {
	return fmt.Sprintf("tool %s (%s): %s", e.Tool, e.Module, e.Reason)
}

func (e *Fault) Unwrap() error { return e.Err }

// CacheError is a compilation that failed because of the file compilation
// cache, not the module, even after the cache was checked and bypassed
// (say, its folder cannot be read).
type CacheError struct {
	Dir string
	Err error
}

func (e *CacheError) Error() string {
	return fmt.Sprintf("compilation cache %s: %v (the module itself may be fine; check the folder, or run with the cache off)", e.Dir, e.Err)
}

func (e *CacheError) Unwrap() error { return e.Err }

// CommandError is a module that exports _start but not _initialize: a WASI
// command rather than a reactor. toolhost never calls _start (a command's
// _start runs its program and then exits, which would end the instance
// before the first call), so the module's initialisation would never run
// and its first call would fail obscurely (AssemblyScript's WASI shim
// traps with exit code 255). It is refused at load with how to rebuild it.
type CommandError struct{}

func (*CommandError) Error() string {
	return "exports _start but not _initialize: it is a WASI command, and toolhost never calls _start, " +
		"so the module is never initialised; build it as a reactor (Go: -buildmode=c-shared; " +
		"C: clang -mexec-model=reactor; AssemblyScript: asc --exportStart _initialize, " +
		"as abi/assemblyscript's asconfig.json does)"
}
