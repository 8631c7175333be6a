package resident

import (
	"context"
	"errors"
	"sync"

	"github.com/toolhost/toolhost/third_party/wazero"
)

// Code is a module's compiled code, which may be absent: not compiled yet
// (the module was listed without compiling) or released under the set's
// bound. A call compiles it on demand; calls that arrive while it compiles
// wait for that one compile, each under its own deadline. It is safe for
// concurrent use.
type Code struct {
	set     *Set
	compile func(context.Context) (wazero.CompiledModule, error)

	mu       sync.Mutex
	compiled wazero.CompiledModule // nil while not resident
	pending  *compiling            // the compile in progress, or nil
	users    int                   // instances made from compiled not yet closed
	closed   bool                  // Close was called
	refused  error                 // an error the set refuses for good: the code never compiles
}

// compiling is one on-demand compile; done closes when it ends, and err
// is its outcome. One that background work (AcquireBackground) started
// and no call waits for is background: a call that starts a compile of
// its own stops it (Set.callWaitsLocked), and the background work
// compiles it again once no call waits.
type compiling struct {
	done chan struct{}
	err  error

	ctx        context.Context // the compile's: the set's lifetime, or stopped by a yield
	stop       context.CancelCauseFunc
	background bool // guarded by the set's mu
}

// errModuleClosed is a call on a module after Close.
var errModuleClosed = errors.New("module closed")

// errRuntimeClosed is a call that would compile after Set.Close.
var errRuntimeClosed = errors.New("runtime closed")

// ErrYielded is the cause of a background compile's context when it was
// stopped for a call's compile: not the module's fault, and not the
// runtime closing. AcquireBackground compiles the module again later.
var ErrYielded = errors.New("a background compile stopped to leave the CPUs to a call's compile")

// Code returns a module's code in s: compiled already (not yet counted
// resident: see Loaded), or nil to compile on the first Acquire. compile
// compiles it (again) from its file; it is not bounded by any one caller's
// deadline (the compile limits bound it), so a caller that gives up does
// not waste the work for the next.
func (s *Set) Code(compiled wazero.CompiledModule, compile func(context.Context) (wazero.CompiledModule, error)) *Code {
	return &Code{set: s, compile: compile, compiled: compiled}
}

// Compiled is the code in memory now, nil if none (a module compiled to
// be checked and thrown away takes it from here).
func (c *Code) Compiled() wazero.CompiledModule {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.compiled
}

// Loaded counts the code resident after its module loaded compiled, and
// keeps the set within its bound.
func (c *Code) Loaded() {
	c.mu.Lock()
	c.set.touch(c)
	c.mu.Unlock()
	c.set.trim()
}

// Resident reports whether the code is in memory.
func (c *Code) Resident() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.compiled != nil
}

// Refusal is the error every Acquire returns now without compiling (the
// module closed, or its code refused for good), or nil.
func (c *Code) Refusal() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return errModuleClosed
	}
	return c.refused
}

// Acquire returns the compiled code, compiling it first if it is not
// resident, and counts a user until Release. Waiting for the compile ends
// with ctx (the caller's deadline); the compile itself goes on for the
// calls after it.
func (c *Code) Acquire(ctx context.Context) (wazero.CompiledModule, error) {
	return c.acquire(ctx, false)
}

// AcquireBackground is Acquire for work no call waits for (the warm-up,
// a check of a module's manifest section): it waits while a call waits
// for a compile, and a compile it starts is stopped when a call starts
// one, then started again once no call waits. So a first call's compile
// has the CPUs to itself, and its workers (fixed when a compile starts)
// are all of them.
func (c *Code) AcquireBackground(ctx context.Context) (wazero.CompiledModule, error) {
	for {
		if err := c.set.noCallCompiling(ctx); err != nil {
			return nil, err
		}
		compiled, err := c.acquire(ctx, true)
		if !errors.Is(err, ErrYielded) {
			return compiled, err
		}
	}
}

// acquire is Acquire; background is AcquireBackground's, whose compile a
// call may stop.
func (c *Code) acquire(ctx context.Context, background bool) (wazero.CompiledModule, error) {
	s := c.set
	for {
		c.mu.Lock()
		if c.closed {
			c.mu.Unlock()
			return nil, errModuleClosed
		}
		if c.refused != nil {
			c.mu.Unlock()
			return nil, c.refused
		}
		if c.compiled != nil {
			c.users++
			compiled := c.compiled
			s.touch(c) // under c.mu: never after Close forgot it
			c.mu.Unlock()
			return compiled, nil
		}
		if err := ctx.Err(); err != nil {
			c.mu.Unlock()
			return nil, err
		}
		p := c.pending
		if p == nil {
			if !s.life.add() {
				c.mu.Unlock()
				return nil, errRuntimeClosed
			}
			p = &compiling{done: make(chan struct{})}
			p.ctx, p.stop = context.WithCancelCause(s.life.ctx)
			c.pending = p
			s.running.Add(1)
			s.begin(p, background)
			go c.compileOnDemand(p)
		} else if !background {
			s.join(p)
		}
		c.mu.Unlock()
		select {
		case <-p.done:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		if errors.Is(p.err, ErrYielded) {
			if background {
				return nil, p.err // AcquireBackground starts it again later
			}
			continue // stopped just before this call joined: compile it now
		}
		if p.err != nil {
			return nil, p.err
		}
		// Compiled: take it (or, if it was released at once, compile again).
	}
}

// Release ends a use Acquire counted.
func (c *Code) Release() {
	c.mu.Lock()
	c.users--
	var drop wazero.CompiledModule
	if c.closed && c.users == 0 && c.compiled != nil {
		drop, c.compiled = c.compiled, nil
	}
	c.mu.Unlock()
	if drop != nil {
		_ = drop.Close(context.Background())
	}
	c.set.trim()
}

// Close releases the compiled code once the instances made from it are
// closed, and refuses further Acquires.
func (c *Code) Close(ctx context.Context) error {
	c.mu.Lock()
	c.closed = true
	c.set.forget(c)
	var drop wazero.CompiledModule
	if c.users == 0 {
		drop, c.compiled = c.compiled, nil
	}
	c.mu.Unlock()
	if drop == nil {
		return nil
	}
	return drop.Close(ctx)
}

// compileOnDemand compiles the code for p.
func (c *Code) compileOnDemand(p *compiling) {
	s := c.set
	defer s.life.done()
	defer s.running.Add(-1)
	compiled, err := c.compile(p.ctx)
	if err != nil && s.life.ctx.Err() == nil && errors.Is(context.Cause(p.ctx), ErrYielded) {
		err = ErrYielded
	}
	p.stop(nil)
	c.mu.Lock()
	s.end(p) // with c.pending below, under c.mu: no call joins p after its end
	if err != nil && s.refuses != nil && s.refuses(err) {
		c.refused = err
	}
	p.err = err
	c.pending = nil
	if err == nil && c.closed {
		_ = compiled.Close(context.Background())
		p.err = errModuleClosed
	} else if err == nil {
		c.compiled = compiled
		s.touch(c)
	}
	c.mu.Unlock()
	close(p.done)
	if err == nil {
		s.trim()
	}
}

// release drops the compiled code if no instance uses it; the next call
// compiles it again (from the file cache). It reports whether the code is
// gone.
func (c *Code) release() bool {
	c.mu.Lock()
	if c.users > 0 {
		c.mu.Unlock()
		return false
	}
	drop := c.compiled
	c.compiled = nil
	c.set.forget(c) // under c.mu, like touch
	c.mu.Unlock()
	if drop != nil {
		_ = drop.Close(context.Background())
		c.set.dropped.Add(1)
	}
	return true
}
