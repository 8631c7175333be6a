package warm

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/toolhost/toolhost/abi"
	"github.com/toolhost/toolhost/internal/hostconf"
	"github.com/toolhost/toolhost/internal/testkit/testwasm"
	"github.com/toolhost/toolhost/third_party/wazero"
	"github.com/toolhost/toolhost/third_party/wazero/api"
)

// module is a real compiled module (the echo fixture) whose instances the
// pools keep.
type module struct {
	name     string
	rt       wazero.Runtime
	compiled wazero.CompiledModule
	state    ModState
}

type instance struct {
	mod   api.Module
	bound context.Context
}

func (i *instance) Bind(ctx context.Context, _ io.Writer) { i.bound = ctx }
func (i *instance) MemoryBytes() uint64                   { return uint64(i.mod.Memory().Size()) }
func (i *instance) Close()                                { _ = i.mod.Close(context.Background()) }

type maker struct{ m *module }

func (k maker) Make(ctx context.Context, _ io.Writer) (*instance, error) { return k.Warm(ctx) }
func (k maker) Warm(ctx context.Context) (*instance, error) {
	mod, err := k.m.rt.InstantiateModule(ctx, k.m.compiled, wazero.NewModuleConfig().WithName(""))
	if err != nil {
		return nil, err
	}
	return &instance{mod: mod}, nil
}

func newModule(t *testing.T, name string) *module {
	t.Helper()
	wasm, err := os.ReadFile(testwasm.WAT(t, "host/testdata/wat/echo.wat"))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	rt := wazero.NewRuntime(ctx)
	t.Cleanup(func() { rt.Close(ctx) })
	c, err := rt.CompileModule(ctx, wasm)
	if err != nil {
		t.Fatal(err)
	}
	return &module{name: name, rt: rt, compiled: c}
}

// clock is an injected Now.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time      { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *clock) add(d time.Duration) { c.mu.Lock(); c.now = c.now.Add(d); c.mu.Unlock() }
func newPools(t *testing.T, cfg hostconf.Reuse) *Pools[*module, *instance] {
	t.Helper()
	for _, d := range []struct {
		v   *int
		def int
	}{{&cfg.MaxPerTool, 8}, {&cfg.MaxTotal, 64}, {&cfg.MaxUses, 1000}} {
		if *d.v == 0 {
			*d.v = d.def
		}
	}
	if cfg.IdleTimeout == 0 {
		cfg.IdleTimeout = time.Hour
	}
	if cfg.MemoryHighWater == 0 {
		cfg.MemoryHighWater = 32 << 20
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	p := New[*module, *instance](cfg, slog.New(slog.DiscardHandler),
		func(m *module) string { return m.name }, func(m *module) *ModState { return &m.state })
	t.Cleanup(p.Close)
	return p
}

// call takes an instance for key, checks it is bound to the call, and
// hands it back after an outcome err.
func call(t *testing.T, p *Pools[*module, *instance], key Key[*module], err error) *instance {
	t.Helper()
	ctx := context.Background()
	w, aerr := p.Acquire(ctx, key, maker{key.Mod}, io.Discard)
	if aerr != nil {
		t.Fatal(aerr)
	}
	if w == nil {
		return nil
	}
	if w.Inst.bound != ctx {
		t.Fatal("the instance is not bound to the call that took it")
	}
	inst := w.Inst
	p.Release(ctx, w, err)
	if inst.bound != nil {
		t.Fatal("the instance is still bound to a call that ended")
	}
	p.WaitWarming(key.Mod)
	return inst
}

// TestCallerGetsItsInstanceBack: a caller's next call runs in the instance
// its last call used; another caller's pool is its own.
func TestCallerGetsItsInstanceBack(t *testing.T) {
	p := newPools(t, hostconf.Reuse{})
	m := newModule(t, "a.wasm")
	alice := Key[*module]{Mod: m, Tool: "echo", Caller: "alice", Memory: 1 << 20}
	first := call(t, p, alice, nil)
	if again := call(t, p, alice, nil); again != first {
		t.Fatal("the caller's second call got another instance than its first")
	}
	bob := alice
	bob.Caller = "bob"
	if other := call(t, p, bob, nil); other == first {
		t.Fatal("another caller got alice's instance")
	}
	st := p.Stats()
	if len(st) != 1 || st[0].Callers != 2 || st[0].Busy != 0 || st[0].Idle != 4 {
		t.Fatalf("stats %+v; want one tool, 2 callers, 4 idle (each caller's own and a spare)", st)
	}
}

// TestRetireReasons: a failed call (not a schema error), a stopped call
// and MaxUses retire the instance; a schema error does not.
func TestRetireReasons(t *testing.T) {
	p := newPools(t, hostconf.Reuse{MaxUses: 2})
	m := newModule(t, "a.wasm")
	key := Key[*module]{Mod: m, Tool: "echo", Caller: "alice", Memory: 1 << 20}
	first := call(t, p, key, &abi.Error{Kind: abi.KindSchema, Message: "bad arguments"})
	if call(t, p, key, nil) != first {
		t.Fatal("a schema error retired the instance")
	}
	if p.Retired()[RetiredUses] != 1 {
		t.Fatalf("retired %v after 2 uses under MaxUses 2; want uses: 1", p.Retired())
	}
	call(t, p, key, errors.New("trap"))
	if p.Retired()[RetiredError] != 1 {
		t.Fatalf("retired %v after a failed call; want error: 1", p.Retired())
	}
	ctx, cancel := context.WithCancel(context.Background())
	w, err := p.Acquire(ctx, key, maker{m}, io.Discard)
	if err != nil || w == nil {
		t.Fatal(w, err)
	}
	cancel()
	p.Release(ctx, w, nil)
	if p.Retired()[RetiredStopped] != 1 {
		t.Fatalf("retired %v after a cancelled call; want stopped: 1", p.Retired())
	}
}

// TestBoundEvictsTheLeastRecentlyUsed: with no room for a caller's first
// instance, the tool's idle instance used longest ago makes room.
func TestBoundEvictsTheLeastRecentlyUsed(t *testing.T) {
	clk := &clock{now: time.Unix(1e9, 0)}
	p := newPools(t, hostconf.Reuse{MaxPerTool: 2, Now: clk.Now})
	m := newModule(t, "a.wasm")
	key := func(caller string) Key[*module] {
		return Key[*module]{Mod: m, Tool: "echo", Caller: caller, Memory: 1 << 20}
	}
	call(t, p, key("alice"), nil) // alice's instance and a spare: the bound is full
	clk.add(time.Second)
	call(t, p, key("bob"), nil)
	if p.Retired()[RetiredEvicted] != 1 {
		t.Fatalf("retired %v; want evicted: 1", p.Retired())
	}
	st := p.Stats()
	if len(st) != 1 || st[0].Idle != 2 {
		t.Fatalf("stats %+v; want 2 idle within the bound", st)
	}
}

// TestIdleInstancesExpire: Sweep retires what has been idle for
// IdleTimeout.
func TestIdleInstancesExpire(t *testing.T) {
	clk := &clock{now: time.Unix(1e9, 0)}
	p := newPools(t, hostconf.Reuse{IdleTimeout: time.Minute, Now: clk.Now})
	m := newModule(t, "a.wasm")
	call(t, p, Key[*module]{Mod: m, Tool: "echo", Caller: "alice", Memory: 1 << 20}, nil)
	p.Sweep()
	if n := p.Retired()[RetiredIdle]; n != 0 {
		t.Fatalf("%d retired before the idle timeout", n)
	}
	clk.add(time.Minute)
	p.Sweep()
	if n := p.Retired()[RetiredIdle]; n != 2 {
		t.Fatalf("%d retired idle after the timeout; want 2 (the caller's and the spare)", n)
	}
	if st := p.Stats(); len(st) != 0 {
		t.Fatalf("stats %+v after every instance expired; want none", st)
	}
}

// TestClosedModuleGetsNoWarmInstance: CloseModule retires a module's idle
// instances, and its later calls run fresh (Acquire returns nil).
func TestClosedModuleGetsNoWarmInstance(t *testing.T) {
	p := newPools(t, hostconf.Reuse{})
	m := newModule(t, "a.wasm")
	key := Key[*module]{Mod: m, Tool: "echo", Caller: "alice", Memory: 1 << 20}
	call(t, p, key, nil)
	p.CloseModule(m)
	if n := p.Retired()[RetiredClosed]; n != 2 {
		t.Fatalf("%d retired by the close; want 2", n)
	}
	if call(t, p, key, nil) != nil {
		t.Fatal("a closed module's call got a warm instance")
	}
	never := newModule(t, "b.wasm")
	p.CloseModule(never) // no call ever asked: none may start now
	if call(t, p, Key[*module]{Mod: never, Tool: "echo", Caller: "alice", Memory: 1 << 20}, nil) != nil {
		t.Fatal("a module closed before its first call got a warm instance")
	}
}
