package host_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolhost/toolhost/abi"
	"github.com/toolhost/toolhost/host"
	"github.com/toolhost/toolhost/internal/testkit/testwasm"
)

// counterRuntime is a runtime of the test's own with cfg and the counter
// module (testdata/wat/counter.wat) loaded.
func counterRuntime(t *testing.T, cfg host.Reuse) (*host.Runtime, *host.Module) {
	t.Helper()
	rt := newRuntime(t, host.Config{Reuse: cfg})
	return rt, loadCounter(t, rt)
}

func loadCounter(t *testing.T, rt *host.Runtime) *host.Module {
	t.Helper()
	return load(t, rt, watPath(t, "counter"))
}

// count calls tool as caller with {"do": op} and returns the result; a
// call that fails returns the error.
func count(ctx context.Context, m *host.Module, tool, caller, op string) (string, error) {
	res, err := m.Do(ctx, host.Request{Tool: tool, Args: fmt.Appendf(nil, `{"do":%q}`, op), Caller: caller, Reuse: true})
	return string(res), err
}

// expect makes each call in turn (caller, op) and checks its result.
func expect(t *testing.T, m *host.Module, steps ...[3]string) {
	t.Helper()
	for i, s := range steps {
		got, err := count(context.Background(), m, "counter.reuse", s[0], s[1])
		if err != nil {
			t.Fatalf("step %d (%s %s): %v", i, s[0], s[1], err)
		}
		if got != s[2] {
			t.Fatalf("step %d (%s %s) = %s, want %s", i, s[0], s[1], got, s[2])
		}
	}
}

func stats(t *testing.T, rt *host.Runtime, tool string) host.PoolStats {
	t.Helper()
	var sum host.PoolStats
	for _, s := range rt.PoolStats() {
		if s.Tool == tool {
			sum.Idle += s.Idle
			sum.Busy += s.Busy
			sum.Warming += s.Warming
			sum.Callers += s.Callers
		}
	}
	return sum
}

func TestReuseKeepsStateForOneCaller(t *testing.T) {
	_, m := counterRuntime(t, host.Reuse{})
	expect(t, m,
		[3]string{"alice", "n", "1"},
		[3]string{"alice", "n", "2"},
		[3]string{"alice", "n", "3"},
		[3]string{"bob", "n", "1"}, // never another caller's instance
		[3]string{"alice", "n", "4"},
		[3]string{"bob", "n", "2"},
		[3]string{"", "n", "1"}, // the anonymous caller is a caller of its own
	)
}

func TestReuseOnlyWhenDeclaredAndAllowed(t *testing.T) {
	ctx := context.Background()
	_, m := counterRuntime(t, host.Reuse{})
	for _, c := range []struct {
		name  string
		tool  string
		allow bool
	}{
		{"manifest says fresh", "counter.fresh", true},
		{"operator says fresh", "counter.reuse", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			for range 3 {
				res, err := m.Do(ctx, host.Request{Tool: c.tool, Caller: "alice", Reuse: c.allow})
				if err != nil || string(res) != "1" {
					t.Fatalf("call = %s, %v; want 1 (a fresh instance)", res, err)
				}
			}
		})
	}
	if !m.Reusable("counter.reuse") || m.Reusable("counter.fresh") || m.Reusable("nope") {
		t.Error("Reusable does not follow the manifest")
	}
}

func TestReuseOff(t *testing.T) {
	rt, m := counterRuntime(t, host.Reuse{Off: true})
	expect(t, m, [3]string{"alice", "n", "1"}, [3]string{"alice", "n", "1"})
	if m.Reusable("counter.reuse") || !rt.ReuseOff() {
		t.Error("reuse is off, yet the tool is reusable")
	}
	if s := rt.PoolStats(); len(s) != 0 {
		t.Errorf("PoolStats = %+v, want none", s)
	}
}

func TestReuseFirstCallWarmsTheNext(t *testing.T) {
	rt, m := counterRuntime(t, host.Reuse{})
	expect(t, m, [3]string{"alice", "n", "1"})
	m.WaitWarming()
	if s := stats(t, rt, "counter.reuse"); s.Idle != 2 || s.Busy != 0 || s.Warming != 0 || s.Callers != 1 {
		t.Fatalf("after the first call: %+v, want 2 idle (the used one and a spare) for 1 caller", s)
	}
	// The caller's own instance serves it before the spare.
	expect(t, m, [3]string{"alice", "n", "2"})
}

// TestReuseRetires checks every reason a warm instance is not used again:
// after it, the caller's next call starts from a fresh counter.
func TestReuseRetires(t *testing.T) {
	// A deadline that passes 20 ms after the instance starts running the
	// call: a wall-clock one could pass before the call even starts on a
	// loaded machine, and then no instance is involved.
	spin := func(ctx context.Context) context.Context {
		return &expiresInside{Context: ctx, done: make(chan struct{})}
	}
	cancelInside := func(ctx context.Context) context.Context {
		ctx, cancel := context.WithCancel(ctx)
		in := &enteredCtx{Context: ctx, entered: make(chan struct{})}
		go func() { <-in.entered; cancel() }() // once the instance is running the call
		return in
	}
	for _, c := range []struct {
		name   string
		op     string
		ctx    func(context.Context) context.Context
		reason string
		check  func(error) bool
	}{
		{"internal error", "i", nil, host.RetiredError, func(err error) bool {
			var ae *abi.Error
			return errors.As(err, &ae) && ae.Kind == abi.KindInternal
		}},
		{"trap", "u", nil, host.RetiredError, func(err error) bool {
			var f *host.Fault
			return errors.As(err, &f)
		}},
		{"timeout", "p", spin, host.RetiredStopped, func(err error) bool { return errors.Is(err, context.DeadlineExceeded) }},
		{"cancelled in a call", "p", cancelInside, host.RetiredStopped, func(err error) bool { return errors.Is(err, context.Canceled) }},
	} {
		t.Run(c.name, func(t *testing.T) {
			rt, m := counterRuntime(t, host.Reuse{})
			expect(t, m, [3]string{"alice", "n", "1"}, [3]string{"alice", "n", "2"})
			m.WaitWarming()
			ctx := context.Background()
			if c.ctx != nil {
				ctx = c.ctx(ctx)
			}
			_, err := count(ctx, m, "counter.reuse", "alice", c.op)
			if !c.check(err) {
				t.Fatalf("call %s: err = %v", c.op, err)
			}
			if got := rt.RetiredInstances()[c.reason]; got != 1 {
				t.Errorf("retired %s = %d, want 1 (%v)", c.reason, got, rt.RetiredInstances())
			}
			expect(t, m, [3]string{"alice", "n", "1"})
		})
	}
}

// A call cancelled before it starts fails without touching the caller's
// warm instance.
func TestReuseKeepsInstanceAfterCancelledStart(t *testing.T) {
	rt, m := counterRuntime(t, host.Reuse{})
	expect(t, m, [3]string{"alice", "n", "1"})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := count(ctx, m, "counter.reuse", "alice", "n"); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	expect(t, m, [3]string{"alice", "n", "2"})
	if r := rt.RetiredInstances(); len(r) != 0 {
		t.Errorf("retired %v, want none", r)
	}
}

func TestReuseKeepsInstanceAfterSchemaError(t *testing.T) {
	rt, m := counterRuntime(t, host.Reuse{})
	expect(t, m, [3]string{"alice", "n", "1"})
	_, err := count(context.Background(), m, "counter.reuse", "alice", "s")
	var ae *abi.Error
	if !errors.As(err, &ae) || ae.Kind != abi.KindSchema {
		t.Fatalf("err = %v, want a schema error", err)
	}
	expect(t, m, [3]string{"alice", "n", "3"})
	if r := rt.RetiredInstances(); len(r) != 0 {
		t.Errorf("retired %v, want none", r)
	}
}

func TestReuseRetiresAfterMaxUses(t *testing.T) {
	rt, m := counterRuntime(t, host.Reuse{MaxUses: 3})
	expect(t, m,
		[3]string{"alice", "n", "1"},
		[3]string{"alice", "n", "2"},
		[3]string{"alice", "n", "3"},
		[3]string{"alice", "n", "1"},
	)
	if got := rt.RetiredInstances()[host.RetiredUses]; got != 1 {
		t.Errorf("retired for uses: %d, want 1", got)
	}
}

func TestReuseRetiresPastMemoryMark(t *testing.T) {
	rt, m := counterRuntime(t, host.Reuse{MemoryHighWater: 3 * 65536})
	// "g" grows memory from 1 page to 5, past the 3-page mark.
	expect(t, m, [3]string{"alice", "n", "1"}, [3]string{"alice", "g", "2"}, [3]string{"alice", "n", "1"})
	if got := rt.RetiredInstances()[host.RetiredMemory]; got != 1 {
		t.Errorf("retired for memory: %d, want 1", got)
	}
}

// clock is an injected clock tests move by hand.
type clock struct{ ns atomic.Int64 }

func (c *clock) now() time.Time          { return time.Unix(0, c.ns.Load()) }
func (c *clock) advance(d time.Duration) { c.ns.Add(int64(d)) }

func TestReuseRetiresIdle(t *testing.T) {
	t.Run("at the next call", func(t *testing.T) {
		clk := &clock{}
		rt, m := counterRuntime(t, host.Reuse{Now: clk.now, IdleTimeout: time.Minute})
		expect(t, m, [3]string{"alice", "n", "1"})
		m.WaitWarming()
		clk.advance(59 * time.Second)
		expect(t, m, [3]string{"alice", "n", "2"})
		m.WaitWarming()
		clk.advance(time.Minute)
		expect(t, m, [3]string{"alice", "n", "1"})
		if got := rt.RetiredInstances()[host.RetiredIdle]; got != 2 { // the used one and the spare
			t.Errorf("retired idle: %d, want 2", got)
		}
	})
	t.Run("by the sweeper", func(t *testing.T) {
		clk := &clock{}
		rt, m := counterRuntime(t, host.Reuse{Now: clk.now, IdleTimeout: time.Minute})
		expect(t, m, [3]string{"alice", "n", "1"}, [3]string{"bob", "n", "1"})
		m.WaitWarming()
		rt.SweepIdle()
		if s := stats(t, rt, "counter.reuse"); s.Idle != 4 {
			t.Fatalf("before the timeout: %+v, want 4 idle", s)
		}
		clk.advance(time.Minute)
		rt.SweepIdle()
		if s := stats(t, rt, "counter.reuse"); s != (host.PoolStats{}) {
			t.Fatalf("after the timeout: %+v, want nothing left", s)
		}
	})
}

func TestReuseDrainsOnClose(t *testing.T) {
	rt := newRuntime(t, host.Config{})
	old, cur := loadCounter(t, rt), loadCounter(t, rt)
	expect(t, old, [3]string{"alice", "n", "1"})
	old.WaitWarming()
	expect(t, old, [3]string{"alice", "n", "2"})
	expect(t, cur, [3]string{"alice", "n", "1"})
	cur.WaitWarming()
	if s := stats(t, rt, "counter.reuse"); s.Idle != 4 {
		t.Fatalf("before closing: %+v, want 4 idle", s)
	}
	if err := old.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	// Both modules come from one file: only the other's 2 are left.
	if s := stats(t, rt, "counter.reuse"); s.Idle != 2 || s.Callers != 1 {
		t.Errorf("after closing one module: %+v, want the other's 2 idle", s)
	}
	if got := rt.RetiredInstances()[host.RetiredClosed]; got != 2 {
		t.Errorf("retired closed: %d, want 2", got)
	}
	expect(t, cur, [3]string{"alice", "n", "2"})
	// A closed module makes no warm instances again.
	_, _ = count(context.Background(), old, "counter.reuse", "alice", "n")
	if s := stats(t, rt, "counter.reuse"); s.Idle != 2 || s.Callers != 1 {
		t.Errorf("after a call of the closed module: %+v, want the other's 2 idle", s)
	}
}

func TestReuseBounds(t *testing.T) {
	t.Run("per tool", func(t *testing.T) {
		rt, m := counterRuntime(t, host.Reuse{MaxPerTool: 2})
		for _, caller := range []string{"a", "b", "c", "d"} {
			// Each new caller makes room by retiring the least recently
			// used idle instance, then reuses its own.
			expect(t, m, [3]string{caller, "n", "1"}, [3]string{caller, "n", "2"})
			m.WaitWarming()
			if s := stats(t, rt, "counter.reuse"); s.Idle+s.Busy+s.Warming > 2 {
				t.Fatalf("after %s: %+v, over the bound of 2", caller, s)
			}
		}
		if rt.RetiredInstances()[host.RetiredEvicted] == 0 {
			t.Error("nothing was evicted")
		}
	})
	t.Run("in total", func(t *testing.T) {
		rt := newRuntime(t, host.Config{Reuse: host.Reuse{MaxTotal: 3}})
		a, b := loadCounter(t, rt), loadCounter(t, rt)
		for _, caller := range []string{"x", "y", "z"} {
			for _, m := range []*host.Module{a, b} {
				expect(t, m, [3]string{caller, "n", "1"}, [3]string{caller, "n", "2"})
				m.WaitWarming()
			}
			total := 0
			for _, s := range rt.PoolStats() {
				total += s.Idle + s.Busy + s.Warming
			}
			if total > 3 {
				t.Fatalf("after %s: %d instances, over the bound of 3", caller, total)
			}
		}
	})
	t.Run("all busy: a one-off instance", func(t *testing.T) {
		_, m := counterRuntime(t, host.Reuse{MaxPerTool: 1})
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		in := &enteredCtx{Context: ctx, entered: make(chan struct{})}
		spinning := make(chan error, 1)
		go func() { _, err := count(in, m, "counter.reuse", "a", "p"); spinning <- err }()
		<-in.entered // a holds the tool's one instance
		expect(t, m, [3]string{"b", "n", "1"}, [3]string{"b", "n", "1"})
		cancel()
		if err := <-spinning; !errors.Is(err, context.Canceled) {
			t.Fatalf("spinner: %v", err)
		}
	})
}

// enteredCtx closes entered the first time anything asks for its Done
// channel: wazero does as it starts a guest function (to stop it at the
// deadline), by which time the host has taken the call's instance.
type enteredCtx struct {
	context.Context
	once    sync.Once
	entered chan struct{}
}

func (c *enteredCtx) Done() <-chan struct{} {
	c.once.Do(func() { close(c.entered) })
	return c.Context.Done()
}

// expiresInside reaches its deadline 20 ms after wazero first asks for its
// Done channel, that is, after the host has started the call in an
// instance.
type expiresInside struct {
	context.Context
	once    sync.Once
	done    chan struct{}
	expired atomic.Bool
}

func (c *expiresInside) Done() <-chan struct{} {
	c.once.Do(func() {
		time.AfterFunc(20*time.Millisecond, func() { c.expired.Store(true); close(c.done) })
	})
	return c.done
}

func (c *expiresInside) Err() error {
	if c.expired.Load() {
		return context.DeadlineExceeded
	}
	return nil
}

// TestReuseConcurrent runs callers in parallel, two goroutines each: every
// call succeeds (counter.wat traps when a second call enters an instance),
// each caller's counts are its own, and the bounds hold. Run with -race.
func TestReuseConcurrent(t *testing.T) {
	const callers, perCaller, calls = 4, 2, 40
	rt, m := counterRuntime(t, host.Reuse{MaxPerTool: 6})
	var wg sync.WaitGroup
	errs := make(chan error, callers*perCaller)
	for c := range callers {
		for range perCaller {
			wg.Go(func() {
				for range calls {
					if _, err := count(context.Background(), m, "counter.reuse", fmt.Sprint("c", c), "n"); err != nil {
						errs <- err
						return
					}
					if s := stats(t, rt, "counter.reuse"); s.Idle+s.Busy+s.Warming > 6 {
						errs <- fmt.Errorf("%+v over the bound of 6", s)
						return
					}
				}
			})
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	m.WaitWarming()
	// No instance saw more calls than its caller made: each caller's
	// largest count is at most its own number of calls.
	for c := range callers {
		got, err := count(context.Background(), m, "counter.reuse", fmt.Sprint("c", c), "n")
		if err != nil {
			t.Fatal(err)
		}
		var n int
		fmt.Sscan(got, &n)
		if n > perCaller*calls+1 {
			t.Errorf("caller c%d counted %d, more than its %d calls", c, n, perCaller*calls+1)
		}
	}
}

// TestReuseRealGuests: the example tools in Go (abi/guest) and C (abi/c)
// declare reuse and give the same answer call after call in one warm
// instance, whose memory stays under the high-water mark.
func TestReuseRealGuests(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		path func(testing.TB) string
		tool string
		args string
		want string
	}{
		{func(t testing.TB) string { return testwasm.Go(t, "./tools-src/text") }, "text.count",
			`{"text":"the cat and the hat"}`, `{"words":5,"lines":1,"runes":19,"bytes":19}`},
		{func(t testing.TB) string { return testwasm.C(t, "tools-src-c/wordfreq") }, "wordfreq.top",
			`{"text":"the cat and the hat","top":1}`, `{"words":5,"unique":4,"top":[{"word":"the","count":2}]}`},
	} {
		t.Run(c.tool, func(t *testing.T) {
			rt := newRuntime(t, host.Config{})
			m, err := rt.LoadFile(ctx, c.path(t))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = m.Close(ctx) })
			if !m.Reusable(c.tool) {
				t.Fatalf("%s does not declare reuse", c.tool)
			}
			for i := range 200 {
				res, err := m.Do(ctx, host.Request{Tool: c.tool, Args: []byte(c.args), Caller: "alice", Reuse: true})
				if err != nil || string(res) != c.want {
					t.Fatalf("call %d = %s, %v; want %s", i, res, err, c.want)
				}
			}
			if r := rt.RetiredInstances(); len(r) != 0 {
				t.Errorf("retired %v, want none", r)
			}
			m.WaitWarming()
			if s := stats(t, rt, c.tool); s.Idle != 2 {
				t.Errorf("%+v, want 2 idle: the caller's instance and one spare", s)
			}
		})
	}
}

// The shortest idle timeout the config accepts (1 ns) works: every
// instance has expired by the next call (the sweeper's tick once made
// time.NewTicker panic with it).
func TestReuseTinyIdleTimeout(t *testing.T) {
	_, m := counterRuntime(t, host.Reuse{IdleTimeout: time.Nanosecond})
	expect(t, m, [3]string{"alice", "n", "1"}, [3]string{"alice", "n", "1"})
}
