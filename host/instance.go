package host

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/toolhost/toolhost/abi"
	"github.com/toolhost/toolhost/imports/extism"
	"github.com/toolhost/toolhost/third_party/wazero"
	"github.com/toolhost/toolhost/third_party/wazero/api"
	"github.com/toolhost/toolhost/third_party/wazero/sys"
)

// instance is one live guest: created for a single call and closed after,
// or, warm (st set), kept for more calls of one caller (see pool.go).
type instance struct {
	mod api.Module
	m   *Module    // whose code it runs: in use until close
	st  *callState // nil for a fresh instance

	// toolhost_alloc and toolhost_call, looked up on first use: wazero
	// makes a new function, with a stack of its own, at every lookup,
	// which a warm instance would otherwise pay on every call.
	alloc, call api.Function

	// kernel is an Extism plugin's kernel state (extism.go), made on its
	// first call and kept as long as the instance.
	kernel *extism.Kernel
}

// exports returns the instance's toolhost_alloc and toolhost_call.
func (i *instance) exports() (alloc, call api.Function) {
	if i.alloc == nil {
		i.alloc = i.mod.ExportedFunction(abi.ExportAlloc)
		i.call = i.mod.ExportedFunction(abi.ExportCall)
	}
	return i.alloc, i.call
}

// baseConfig is the sandbox every instance gets: no arguments, no
// environment, no preopened directories (wazero grants none unless asked),
// empty stdin, real clocks and crypto randomness. Sleep and output are
// per call, added in instantiate.
var baseConfig = wazero.NewModuleConfig().
	WithName("").
	WithStartFunctions(abi.ExportInitialize).
	WithSysWalltime().
	WithSysNanotime().
	WithRandSource(rand.Reader)

// instantiate makes a fresh instance whose memory is capped at
// lim.MemoryBytes (a zeroed buffer from the module's pool; see membuf.Pool)
// and whose sleeps end when ctx does.
func (m *Module) instantiate(ctx context.Context, lim Limits, out io.Writer) (*instance, error) {
	mod, err := m.newModule(ctx, lim, baseConfig.WithNanosleep(sleeper(ctx)).WithStdout(out).WithStderr(out))
	if err != nil {
		return nil, err
	}
	return &instance{mod: mod, m: m}, nil
}

// instantiateWarm makes an instance for a pool: like instantiate, but its
// sleeps and output follow st, which each call binds to itself, since the
// instance outlives the call it was made in.
func (m *Module) instantiateWarm(ctx context.Context, lim Limits, st *callState) (*instance, error) {
	mod, err := m.newModule(ctx, lim, baseConfig.WithNanosleep(st.sleep).WithStdout(st).WithStderr(st))
	if err != nil {
		return nil, err
	}
	return &instance{mod: mod, m: m, st: st}, nil
}

// newModule instantiates the module's code with cfg, its memory from the
// module's pool capped at lim.MemoryBytes: from the module's snapshot when
// the operator asked for one (snapshot.go), else by running _initialize.
// The code stays acquired until the instance is closed.
func (m *Module) newModule(ctx context.Context, lim Limits, cfg wazero.ModuleConfig) (api.Module, error) {
	if m.minBytes > lim.MemoryBytes {
		return nil, fmt.Errorf("module needs %d bytes of memory at start, over the %d-byte limit", m.minBytes, lim.MemoryBytes)
	}
	compiled, err := m.acquireCode(ctx)
	if err != nil {
		return nil, err
	}
	rt := m.rt.rt
	if m.interpreted {
		rt = m.rt.interp.rt
	}
	mod, err := rt.InstantiateModule(m.snap.instantiating(ctx, m, compiled, lim), compiled, cfg)
	if err != nil {
		m.releaseCode()
		return nil, err
	}
	return mod, nil
}

// callState is the call a warm instance is serving: its sleeps end with
// ctx, and its output goes to out. Only the goroutine running the
// instance's call touches it (the pool's lock orders one call's use before
// the next's).
type callState struct {
	ctx context.Context
	out io.Writer
}

// bind points the instance at a call; bind(nil, nil) between calls.
func (s *callState) bind(ctx context.Context, out io.Writer) { s.ctx, s.out = ctx, out }

func (s *callState) Write(p []byte) (int, error) {
	if s.out == nil {
		return len(p), nil
	}
	return s.out.Write(p)
}

func (s *callState) sleep(ns int64) {
	ctx := s.ctx
	if ctx == nil {
		// No call: nothing runs the guest, so nothing sleeps. Refuse to
		// block rather than sleep unbounded.
		return
	}
	sleeper(ctx)(ns)
}

func (i *instance) close() {
	// A fresh context: the call's may be done, and closing must still free
	// the instance.
	_ = i.mod.Close(context.Background())
	i.m.releaseCode()
}

// read copies the bytes a packed (ptr<<32 | len) result points at, refusing
// more than limit bytes or a range outside guest memory.
func (i *instance) read(packed uint64, limit uint32) ([]byte, error) {
	ptr, n := abi.Unpack(packed)
	if n > limit {
		return nil, fmt.Errorf("returned %d bytes, over the %d-byte output cap", n, limit)
	}
	b, ok := i.mod.Memory().Read(ptr, n)
	if !ok {
		return nil, fmt.Errorf("returned ptr=%d len=%d, outside its %d-byte memory", ptr, n, i.mod.Memory().Size())
	}
	return append([]byte(nil), b...), nil
}

// write asks the guest for len(b) bytes with toolhost_alloc and copies b in.
func (i *instance) write(ctx context.Context, alloc api.Function, b []byte) (uint32, error) {
	res, err := alloc.Call(ctx, uint64(len(b)))
	if err != nil {
		return 0, err
	}
	ptr := uint32(res[0])
	if !i.mod.Memory().Write(ptr, b) {
		return 0, fmt.Errorf("toolhost_alloc(%d) returned %d, outside its %d-byte memory", len(b), ptr, i.mod.Memory().Size())
	}
	return ptr, nil
}

// sleeper is the guest's nanosleep (and so poll_oneoff's clock wait): a real
// sleep that ends early when the call's context ends, so a guest blocked in
// time.Sleep cannot hold its caller past the deadline. wazero's default
// returns at once, which would turn every sleep into a busy loop.
//
// When the context ends it stops the guest there and then, the way WASI's
// proc_exit does (a panic wazero turns into the call's error): returning
// would leave the guest running until wazero's close-on-context-done
// goroutine is scheduled and the guest next reaches a loop header, and a
// Go guest's scheduler goes straight back to sleep meanwhile. That wait
// was most of a sleeping guest's lateness past its deadline.
func sleeper(ctx context.Context) sys.Nanosleep {
	return func(ns int64) {
		if ctx.Err() != nil {
			stopGuest(ctx)
		}
		if ns <= 0 {
			return
		}
		t := time.NewTimer(time.Duration(ns))
		defer t.Stop()
		select {
		case <-t.C:
		case <-ctx.Done():
			stopGuest(ctx)
		}
	}
}

// stopGuest ends the guest's call from inside a host function: wazero
// recovers the panic and returns it from the exported function, and the
// caller, seeing ctx ended, reports the context's error.
func stopGuest(ctx context.Context) {
	code := uint32(sys.ExitCodeContextCanceled)
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		code = sys.ExitCodeDeadlineExceeded
	}
	panic(sys.NewExitError(code))
}

// discard is an io.Writer that drops everything (describe's guest output).
type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }
