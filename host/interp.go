package host

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/toolhost/toolhost/host/internal/resident"
	"github.com/toolhost/toolhost/third_party/wazero"
)

// MaxInterpretBytes is the largest module file Config.Interpret runs on
// the interpreter. Its form of a module holds, for as long as the
// module's compile runs, the functions its calls have reached, translated
// on their first calls: about 8 MiB for a Go tool's first call, and at
// most about 30 bytes of heap per byte of code (94 MiB for a 4.5 MB Go
// tool) were every function called.
const MaxInterpretBytes = 6 << 20

// interpreter is wazero's interpreter beside the runtime's compiler, made
// on first use, with the same host modules: it runs the calls of a module
// whose compile is under way (Config.Interpret). Its slot lets one module
// at a time have an interpreted form, so the forms' heap stays bounded.
type interpreter struct {
	once sync.Once
	rt   wazero.Runtime
	err  error
	set  *resident.Set // the interpreted forms' code: never bounded, never compiled on demand
	slot chan struct{}
	// listing lets one module at a time be described on the interpreter
	// to be listed (interplist.go), beside the module in the slot.
	listing chan struct{}

	retiring sync.WaitGroup // retireWhenCompiled goroutines

	beforeForm func() // a test's: runs as a form starts to be made
}

func newInterpreter() *interpreter {
	return &interpreter{set: resident.NewSet(0, 1, nil), slot: make(chan struct{}, 1), listing: make(chan struct{}, 1)}
}

// compile compiles wasm (checked) on the interpreter: it is decoded and
// validated, both linear and bounded by MaxInterpretBytes, and each
// function is translated on its first call, under that call's deadline
// (the fork's change).
func (in *interpreter) compile(ctx context.Context, wasm []byte) (wazero.CompiledModule, error) {
	in.once.Do(func() {
		in.rt, in.err = newWazero(context.Background(), wazero.NewRuntimeConfigInterpreter().WithCloseOnContextDone(true))
	})
	if in.err != nil {
		return nil, in.err
	}
	return in.rt.CompileModule(ctx, wasm)
}

// close closes the interpreter's runtime, if it was made.
func (in *interpreter) close(ctx context.Context) error {
	in.retiring.Wait() // they end with the runtime's compiles
	in.set.Close()
	in.once.Do(func() {}) // none made from here on
	if in.rt == nil {
		return nil
	}
	return in.rt.Close(ctx)
}

// interpForm is a module's interpreted form while its compile runs: the
// module compiled on the interpreter, and how many calls use it now.
// Guarded by the module's interpMu.
type interpForm struct {
	mod     *Module
	calls   int
	retired bool // the compile ended: closed once calls is 0
}

// interpretedFor returns the interpreted form to run a call of m on (its
// module is f.mod), counted as a call until doneInterpreting, or nil for
// the call to wait for m's compile as without Config.Interpret: m's code
// is resident (a planner's always is), or a compile of it will load from
// the file cache (a compiler child compiled it before), or it is an
// Extism plugin or larger than MaxInterpretBytes, or another module holds
// the interpreter's slot, or its interpreted form cannot be made here, or
// ctx ended while another call made it.
// The first call to find none makes it, under that call's ctx, and starts
// m's compile as a call's; the form goes when the compile ends. The calls
// of m meanwhile wait for it only as long as their own ctx lasts: a form
// takes 0.12–0.2 s for a Go tool, longer than a short deadline.
func (m *Module) interpretedFor(ctx context.Context) *interpForm {
	if !m.rt.cfg.Interpret || m.ext != nil || m.interpreted {
		return nil
	}
	for {
		// Again after a wait: the compile may have ended meanwhile.
		if m.code.Resident() || m.code.Refusal() != nil {
			return nil
		}
		m.interpMu.Lock()
		if f := m.interp; f != nil {
			f.calls++
			m.interpMu.Unlock()
			return f
		}
		making := m.interpMaking
		if making == nil {
			break // with interpMu held
		}
		m.interpMu.Unlock()
		select {
		case <-making:
		case <-ctx.Done():
			return nil // the wait for the compile ends at once too
		}
	}
	defer m.interpMu.Unlock()
	sum, err := hex.DecodeString(m.SHA256)
	if err != nil || len(sum) != 32 || m.rt.child.Marked([32]byte(sum)) {
		return nil
	}
	select {
	case m.rt.interp.slot <- struct{}{}:
	default:
		return nil
	}
	making := make(chan struct{})
	m.interpMaking = making
	m.interpMu.Unlock()
	f := m.makeForm(ctx)
	m.interpMu.Lock()
	m.interpMaking = nil
	close(making)
	if f == nil {
		<-m.rt.interp.slot
		return nil
	}
	m.interp = f
	m.rt.interp.retiring.Add(1)
	go m.retireWhenCompiled(f)
	return f
}

// makeForm makes m's interpreted form, counting the call that made it, or
// returns nil when it cannot. It is made with the CPUs to itself, as a
// call's compile is: the background compiles stop meanwhile.
func (m *Module) makeForm(ctx context.Context) *interpForm {
	release := m.rt.residents.Hold()
	defer release()
	if h := m.rt.interp.beforeForm; h != nil {
		h()
	}
	start := time.Now()
	mod, err := m.interpret(ctx)
	if err != nil {
		if ctx.Err() == nil {
			m.rt.logger.Debug("the module cannot run on the interpreter; its calls wait for its compile", "file", m.Path, "err", err)
		}
		return nil
	}
	m.rt.interpForms.Add(1)
	m.rt.logger.Info("module runs on the interpreter until its compile ends", "file", m.Path, "took", time.Since(start))
	return &interpForm{mod: mod, calls: 1}
}

// interpret compiles m's file on the interpreter and checks it as its
// compile would: the file still holds m's bytes, within
// MaxInterpretBytes, its shape and facts are those m was listed with, and
// a module listed from its toolhost.manifest section describes itself as
// the section says (which verifies the section, as a compile does).
func (m *Module) interpret(ctx context.Context) (*Module, error) {
	wasm, err := ReadModuleFile(m.Path)
	if err != nil {
		return nil, err
	}
	if len(wasm) > MaxInterpretBytes {
		return nil, fmt.Errorf("%d bytes, over the interpreter's %d", len(wasm), MaxInterpretBytes)
	}
	sum, err := m.sameBytes(wasm)
	if err != nil {
		return nil, err
	}
	mod, err := m.rt.compileOn(ctx, m.Path, wasm, sum, wantExports, "", m)
	if err != nil {
		return nil, err
	}
	if m.Unverified() {
		err = m.verifyClaim(ctx, mod)
	} else if !m.sameFacts(mod) {
		err = errors.New("the module does not match what it was listed with")
	}
	if err != nil {
		_ = mod.code.Close(ctx)
		return nil, err
	}
	return mod, nil
}

// doneInterpreting ends a call of f that interpretedFor counted.
func (m *Module) doneInterpreting(f *interpForm) {
	m.interpMu.Lock()
	f.calls--
	closing := f.retired && f.calls == 0
	m.interpMu.Unlock()
	if closing {
		m.closeInterpreted(f)
	}
}

// retireWhenCompiled waits for m's compile (started as a call's: the
// background compiles stop for it) and then retires f: no call starts on
// it after that, and it is closed, giving back the interpreter's slot, when
// the last one ends. A compile that fails retires it too: the calls after
// get the compile's error, as without the interpreter.
func (m *Module) retireWhenCompiled(f *interpForm) {
	defer m.rt.interp.retiring.Done()
	if _, err := m.code.Acquire(context.Background()); err == nil {
		m.releaseCode()
	}
	m.interpMu.Lock()
	f.retired = true
	if m.interp == f {
		m.interp = nil
	}
	closing := f.calls == 0
	m.interpMu.Unlock()
	if closing {
		m.closeInterpreted(f)
	}
}

// closeInterpreted closes a retired form no call uses.
func (m *Module) closeInterpreted(f *interpForm) {
	_ = f.mod.code.Close(context.Background())
	<-m.rt.interp.slot
}
