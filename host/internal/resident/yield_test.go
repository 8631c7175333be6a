package resident

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"

	"github.com/toolhost/toolhost/third_party/wazero"
)

// fakeCompiled stands for compiled code: resident only holds and closes it.
type fakeCompiled struct{ wazero.CompiledModule }

func (fakeCompiled) Close(context.Context) error { return nil }

// gate is a compile a test holds until it closes release. It hands each
// compile's context to started. One that honours its context ends when
// it is stopped, as a compile in a child process does; one that does not
// finishes its work and then reports the stop, as a compile that noticed
// it late.
type gate struct {
	started chan context.Context
	release chan struct{}
	honours bool
}

func newGate(honours bool) *gate {
	return &gate{started: make(chan context.Context, 8), release: make(chan struct{}), honours: honours}
}

func (g *gate) compile(ctx context.Context) (wazero.CompiledModule, error) {
	g.started <- ctx
	if g.honours {
		select {
		case <-g.release:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	} else {
		<-g.release
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return fakeCompiled{}, nil
}

// acquire runs c.Acquire on a goroutine of its own; its error arrives on
// the channel once it returns (its code released at once).
func acquire(c *Code) <-chan error {
	done := make(chan error, 1)
	go func() {
		_, err := c.Acquire(context.Background())
		if err == nil {
			c.Release()
		}
		done <- err
	}()
	return done
}

// warmingUp starts a set whose warm-up is compiling module a (its gate
// ga; honours says whether that compile honours a stop) with module b
// (gate gb) not compiled, and returns the warm-up compile's context.
func warmingUp(t *testing.T, honours bool) (s *Set, ga, gb *gate, a, b *Code, warm context.Context) {
	s = NewSet(0, 1, nil)
	t.Cleanup(s.Close)
	ga, gb = newGate(honours), newGate(true)
	a, b = s.Code(nil, ga.compile), s.Code(nil, gb.compile)
	s.WarmUp(a)
	synctest.Wait()
	return s, ga, gb, a, b, <-ga.started
}

// TestCallStopsWarmUp: a call's compile stops the warm-up's compile of
// another module, which starts again only once the call's is done, and
// then compiles it; neither sees an error.
func TestCallStopsWarmUp(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, ga, gb, a, b, warm := warmingUp(t, true)
		call := acquire(b)
		synctest.Wait()
		if !errors.Is(context.Cause(warm), ErrYielded) {
			t.Fatalf("the warm-up's compile went on while a call compiled (cause %v)", context.Cause(warm))
		}
		if len(ga.started) != 0 {
			t.Fatal("the warm-up compiled again while the call's compile ran")
		}
		close(gb.release)
		if err := <-call; err != nil {
			t.Fatalf("the call's Acquire: %v", err)
		}
		synctest.Wait()
		again := <-ga.started
		if again.Err() != nil {
			t.Fatal("the warm-up's second compile started stopped")
		}
		close(ga.release)
		s.Wait()
		if !a.Resident() || !b.Resident() {
			t.Fatalf("resident a=%v b=%v; want both", a.Resident(), b.Resident())
		}
	})
}

// TestCallJoiningWarmUpKeepsIt: a warm-up compile a call waits for is not
// stopped by another call's compile.
func TestCallJoiningWarmUpKeepsIt(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, ga, gb, a, b, warm := warmingUp(t, true)
		callA := acquire(a)
		synctest.Wait()
		callB := acquire(b)
		synctest.Wait()
		if warm.Err() != nil {
			t.Fatalf("a compile a call waits for was stopped (cause %v)", context.Cause(warm))
		}
		close(ga.release)
		close(gb.release)
		for _, call := range []<-chan error{callA, callB} {
			if err := <-call; err != nil {
				t.Fatal(err)
			}
		}
		s.Wait()
		if len(ga.started) != 0 {
			t.Error("module a compiled twice")
		}
	})
}

// TestCallJoiningStoppedCompileCompilesAgain: a call that joins a warm-up
// compile already stopped (but not yet ended) gets the code from a new
// compile, not the stop.
func TestCallJoiningStoppedCompileCompilesAgain(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, ga, gb, a, b, warm := warmingUp(t, false)
		callB := acquire(b) // stops a's compile, which does not notice yet
		synctest.Wait()
		if warm.Err() == nil {
			t.Fatal("the warm-up's compile was not stopped")
		}
		callA := acquire(a) // joins the stopped compile
		synctest.Wait()
		close(ga.release) // the stopped compile ends with its stop; the call compiles again
		if err := <-callA; err != nil {
			t.Fatalf("the call that joined a stopped compile: %v", err)
		}
		if again := <-ga.started; errors.Is(context.Cause(again), ErrYielded) {
			t.Fatal("the call's own compile was stopped as a warm-up's")
		}
		close(gb.release)
		if err := <-callB; err != nil {
			t.Fatal(err)
		}
		s.Wait()
		if !a.Resident() || !b.Resident() {
			t.Fatalf("resident a=%v b=%v; want both", a.Resident(), b.Resident())
		}
	})
}
