package resident

import (
	"context"
	"errors"
	"os"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/toolhost/toolhost/internal/testkit/testwasm"
	"github.com/toolhost/toolhost/third_party/wazero"
)

// compiler compiles the echo fixture on a real wazero runtime, counting
// its compiles.
type compiler struct {
	rt    wazero.Runtime
	wasm  []byte
	count atomic.Int64
}

func newCompiler(t *testing.T) *compiler {
	t.Helper()
	wasm, err := os.ReadFile(testwasm.WAT(t, "host/testdata/wat/echo.wat"))
	if err != nil {
		t.Fatal(err)
	}
	rt := wazero.NewRuntime(context.Background())
	t.Cleanup(func() { rt.Close(context.Background()) })
	return &compiler{rt: rt, wasm: wasm}
}

func (c *compiler) compile(ctx context.Context) (wazero.CompiledModule, error) {
	c.count.Add(1)
	return c.rt.CompileModule(ctx, c.wasm)
}

// TestBoundReleasesTheLeastRecentlyUsed: past the bound, the idle code
// used longest ago is released, and compiles again on its next use.
func TestBoundReleasesTheLeastRecentlyUsed(t *testing.T) {
	ctx := context.Background()
	cc := newCompiler(t)
	s := NewSet(1, 1, nil)
	defer s.Close()
	a, b := s.Code(nil, cc.compile), s.Code(nil, cc.compile)
	use := func(c *Code) {
		t.Helper()
		if _, err := c.Acquire(ctx); err != nil {
			t.Fatal(err)
		}
		c.Release()
	}
	use(a)
	use(b)
	if a.Resident() || !b.Resident() {
		t.Fatalf("resident a=%v b=%v after using a then b under a bound of 1; want only b", a.Resident(), b.Resident())
	}
	if st := s.Stats(); st.Resident != 1 || st.Released != 1 {
		t.Fatalf("stats %+v; want 1 resident, 1 released", st)
	}
	use(a)
	if n := cc.count.Load(); n != 3 {
		t.Fatalf("%d compiles; want 3 (a, b, a again)", n)
	}
}

// TestCodeInUseStays: a code with a user is never released; the bound is
// met again when its use ends.
func TestCodeInUseStays(t *testing.T) {
	ctx := context.Background()
	cc := newCompiler(t)
	s := NewSet(1, 1, nil)
	defer s.Close()
	a, b := s.Code(nil, cc.compile), s.Code(nil, cc.compile)
	if _, err := a.Acquire(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Acquire(ctx); err != nil {
		t.Fatal(err)
	}
	if !a.Resident() || !b.Resident() {
		t.Fatal("a code in use was released")
	}
	// Ending b's use meets the bound again: a, used longer ago, is still
	// in use, so b goes.
	b.Release()
	if !a.Resident() || b.Resident() {
		t.Fatalf("resident a=%v b=%v after b's use ended; want only a", a.Resident(), b.Resident())
	}
	a.Release()
}

// TestConcurrentCallsShareOneCompile: calls that find the code absent
// wait for one compile.
func TestConcurrentCallsShareOneCompile(t *testing.T) {
	ctx := context.Background()
	cc := newCompiler(t)
	s := NewSet(0, 1, nil)
	defer s.Close()
	c := s.Code(nil, cc.compile)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			if _, err := c.Acquire(ctx); err != nil {
				t.Error(err)
				return
			}
			c.Release()
		})
	}
	wg.Wait()
	if n := cc.count.Load(); n != 1 {
		t.Fatalf("%d compiles for 8 concurrent calls; want 1", n)
	}
}

// TestRefusedCodeNeverCompilesAgain: an error the set refuses for good is
// every later call's answer, without compiling.
func TestRefusedCodeNeverCompilesAgain(t *testing.T) {
	refused := errors.New("its manifest section lies")
	calls := 0
	s := NewSet(0, 1, func(err error) bool { return errors.Is(err, refused) })
	defer s.Close()
	c := s.Code(nil, func(context.Context) (wazero.CompiledModule, error) { calls++; return nil, refused })
	for range 3 {
		if _, err := c.Acquire(context.Background()); !errors.Is(err, refused) {
			t.Fatalf("Acquire: %v; want the refusal", err)
		}
	}
	if calls != 1 {
		t.Fatalf("%d compiles; want 1", calls)
	}
}

// TestClosedCodeAndSetRefuse: a closed code, and a code that would
// compile after its set closed, give errors instead of code.
func TestClosedCodeAndSetRefuse(t *testing.T) {
	ctx := context.Background()
	cc := newCompiler(t)
	s := NewSet(0, 1, nil)
	compiled, err := cc.compile(ctx)
	if err != nil {
		t.Fatal(err)
	}
	c := s.Code(compiled, cc.compile)
	c.Loaded()
	if err := c.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Acquire(ctx); !errors.Is(err, errModuleClosed) {
		t.Fatalf("Acquire after Close: %v; want errModuleClosed", err)
	}
	s.Close()
	if _, err := s.Code(nil, cc.compile).Acquire(ctx); !errors.Is(err, errRuntimeClosed) {
		t.Fatalf("Acquire after the set closed: %v; want errRuntimeClosed", err)
	}
}
