//go:build unix

package host_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/toolhost/toolhost/dispatcher"
	"github.com/toolhost/toolhost/host"
	"github.com/toolhost/toolhost/internal/testkit/testwasm"
)

// gatedChild is a compiler child (this test binary, see TestMain) that
// starts only once open is called, so a module's compile lasts as long as
// the test wants, and the calls meanwhile must run on the interpreter.
func gatedChild(t *testing.T) (child []string, open func()) {
	t.Helper()
	gate := filepath.Join(t.TempDir(), "gate")
	if err := syscall.Mkfifo(gate, 0o600); err != nil {
		t.Skipf("no fifo: %v", err)
	}
	opened := false
	open = func() {
		if opened {
			return
		}
		opened = true
		f, err := os.OpenFile(gate, os.O_WRONLY, 0) // waits for the child to read
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintln(f, "go")
		f.Close()
	}
	// The runtime's Close (a later cleanup, so run first) stops its
	// compiles; a child still waiting is let go, and none waiting is fine.
	t.Cleanup(func() {
		if f, err := os.OpenFile(gate, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			fmt.Fprintln(f, "go")
			f.Close()
		}
	})
	return []string{"/bin/sh", "-c", `read x < "$0"; exec "$1"`, gate, os.Args[0]}, open
}

// interpreting is a lazy runtime with Config.Interpret whose compiles wait
// for open, and the module at path loaded into it.
func interpreting(t *testing.T, path string) (rt *host.Runtime, m *host.Module, open func()) {
	t.Helper()
	child, open := gatedChild(t)
	rt = newRuntime(t, host.Config{CacheDir: t.TempDir(), Lazy: true, Interpret: true, Compile: host.CompileLimits{Command: child}})
	m, err := rt.LoadFile(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	if m.Resident() || !m.Unverified() {
		t.Fatal("a module carrying its manifest was compiled at load: the test proves nothing")
	}
	return rt, m, open
}

// A cold start's calls run on the interpreter while the module compiles:
// they answer with the compiler held back, the first verifies the
// module's manifest section on the interpreter, and the calls share one
// interpreted form, which goes once the compiled code is resident; the
// calls after run compiled.
func TestInterpretWhileCompiling(t *testing.T) {
	rt, m, open := interpreting(t, embeddedEcho(t, nil))
	// Without the interpreter the calls would wait for the held compile.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for i := range 2 {
		res, err := m.Call(ctx, "echo", fmt.Appendf(nil, `{"i":%d}`, i), host.Limits{})
		if err != nil || string(res) != fmt.Sprintf(`{"i":%d}`, i) {
			t.Fatalf("call %d while compiling: %s, %v", i, res, err)
		}
	}
	if s := rt.ModuleStats(); s.Interpreted != 1 || s.Compiles != 0 || m.Resident() || m.Unverified() || !m.Interpreting() {
		t.Fatalf("while compiling: %+v, resident %v, unverified %v; want one interpreted form, verified, nothing compiled", s, m.Resident(), m.Unverified())
	}
	open()
	rt.WaitBackground()
	if m.Interpreting() || !m.Resident() {
		t.Fatalf("after the compile: interpreting %v, resident %v; want the compiled code alone", m.Interpreting(), m.Resident())
	}
	if res, err := m.Call(context.Background(), "echo", []byte(`{"k":1}`), host.Limits{}); err != nil || string(res) != `{"k":1}` {
		t.Fatalf("compiled call: %s, %v", res, err)
	}
	if s := rt.ModuleStats(); s.Interpreted != 1 || s.Compiles != 1 {
		t.Fatalf("at the end: %+v; want the one interpreted form and one compile", s)
	}
}

// A call that comes while another call makes the module's interpreted
// form waits for it only as long as its own ctx lasts (a Go tool's form
// takes 0.12–0.2 s); the form, once made, serves the calls after.
func TestInterpretWaitForFormEndsWithCtx(t *testing.T) {
	rt, m, open := interpreting(t, embeddedEcho(t, nil))
	var once sync.Once
	making, gate := make(chan struct{}), make(chan struct{})
	rt.BeforeForm(func() { once.Do(func() { close(making) }); <-gate })
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	first := make(chan error, 1)
	go func() {
		_, err := m.Call(ctx, "echo", []byte(`{"i":1}`), host.Limits{})
		first <- err
	}()
	<-making
	ended, end := context.WithCancel(ctx)
	end()
	second := make(chan error, 1)
	go func() {
		_, err := m.Call(ended, "echo", []byte(`{"i":2}`), host.Limits{})
		second <- err
	}()
	select {
	case err := <-second:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("a call whose ctx ended while the form was made: %v; want its ctx's error", err)
		}
	case <-time.After(10 * time.Second): // a bound on a failure, not a wait for success
		t.Error("a call whose ctx had ended waited for another call's form")
	}
	close(gate)
	if err := <-first; err != nil {
		t.Fatalf("the call that made the form: %v", err)
	}
	if res, err := m.Call(ctx, "echo", []byte(`{"i":3}`), host.Limits{}); err != nil || string(res) != `{"i":3}` || !m.Interpreting() {
		t.Fatalf("a call after the form: %s, %v, interpreting %v", res, err, m.Interpreting())
	}
	if s := rt.ModuleStats(); s.Interpreted != 1 || s.Compiles != 0 {
		t.Fatalf("%+v; want one interpreted form, nothing compiled", s)
	}
	open()
}

// Through the dispatcher the interpreted form is chosen in Prepare, under
// the caller's deadline, and the attempt runs on it.
func TestInterpretThroughDispatcher(t *testing.T) {
	rt, m, _ := interpreting(t, embeddedEcho(t, nil))
	d := timedDispatcher(t, m, "wat.echo", 5*time.Second)
	// Prepare waits for code under the caller's context, not the timeout.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := d.Call(ctx, dispatcher.Call{Tool: "wat.echo", Args: []byte(`{"k":3}`)})
	if err != nil || string(res) != `{"k":3}` {
		t.Fatalf("dispatched call: %s, %v", res, err)
	}
	if s := rt.ModuleStats(); s.Interpreted != 1 || m.Resident() {
		t.Fatalf("%+v, resident %v; want the call interpreted", s, m.Resident())
	}
}

// A module whose section lies is never run on the interpreter: the
// interpreter's describe disagrees, and the call waits for the compile,
// which refuses it as without Config.Interpret.
func TestInterpretRefusesALyingSection(t *testing.T) {
	path := embeddedEcho(t, func(doc map[string]any) {
		doc["manifest"].(map[string]any)["tools"].([]any)[0].(map[string]any)["name"] = "wat.other"
	})
	rt, m, open := interpreting(t, path)
	done := make(chan error, 1)
	go func() {
		_, err := m.Call(context.Background(), "echo", []byte(`{}`), host.Limits{})
		done <- err
	}()
	open()
	var ce *host.ClaimError
	if err := <-done; !errors.As(err, &ce) {
		t.Fatalf("call of a module whose section lies: %v; want a *ClaimError", err)
	}
	if s := rt.ModuleStats(); s.Interpreted != 0 {
		t.Fatalf("%+v; want no interpreted form", s)
	}
}

// One module at a time has an interpreted form: a second module's call
// waits for its own compile, here until its deadline.
func TestInterpretOneModuleAtATime(t *testing.T) {
	child, _ := gatedChild(t)
	rt := newRuntime(t, host.Config{CacheDir: t.TempDir(), Lazy: true, Interpret: true, Compile: host.CompileLimits{Command: child}})
	var mods []*host.Module
	for _, dir := range []string{t.TempDir(), t.TempDir()} {
		b, err := os.ReadFile(embeddedEcho(t, nil))
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, "echo.wasm")
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
		m, err := rt.LoadFile(context.Background(), p)
		if err != nil {
			t.Fatal(err)
		}
		mods = append(mods, m)
	}
	if _, err := mods[0].Call(context.Background(), "echo", []byte(`{}`), host.Limits{}); err != nil {
		t.Fatalf("first module: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	if _, err := mods[1].Call(ctx, "echo", []byte(`{}`), host.Limits{}); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("second module, its compile held: %v; want its wait to end at the deadline", err)
	}
	if s := rt.ModuleStats(); s.Interpreted != 1 {
		t.Fatalf("%+v; want one interpreted form", s)
	}
}

// A module a compiler child compiled before loads from the file cache in
// milliseconds: its first call after a restart waits for that, not the
// interpreter.
func TestInterpretNotForACachedModule(t *testing.T) {
	cache := t.TempDir()
	path := embeddedEcho(t, nil)
	child := host.CompileLimits{Command: []string{os.Args[0]}}
	first := newRuntime(t, host.Config{CacheDir: cache, Compile: child})
	if _, err := first.LoadFile(context.Background(), path); err != nil {
		t.Fatal(err)
	}
	rt := newRuntime(t, host.Config{CacheDir: cache, Lazy: true, Interpret: true, Compile: child})
	m, err := rt.LoadFile(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	if res, err := m.Call(context.Background(), "echo", []byte(`{}`), host.Limits{}); err != nil || string(res) != `{}` {
		t.Fatalf("call: %s, %v", res, err)
	}
	if s := rt.ModuleStats(); s.Interpreted != 0 || s.Compiles != 1 {
		t.Fatalf("%+v; want the cached code, no interpreted form", s)
	}
}

// A deadline stops a call on the interpreter as it does compiled code,
// in recursion without a loop too (the fork's entry checks).
func TestInterpretedCallStopsAtDeadline(t *testing.T) {
	rt, m, _ := interpreting(t, embedded(t, "fib", nil))
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	if _, err := m.Call(ctx, "wat.fib", []byte(`{"n":60}`), host.Limits{}); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("fib(60) on the interpreter: %v; want the deadline's error", err)
	}
	// The compile is held, so the deadline would end a wait for it too:
	// the form proves the call ran.
	if s := rt.ModuleStats(); s.Interpreted != 1 || !m.Interpreting() {
		t.Fatalf("%+v, interpreting %v; want the call on the interpreted form", s, m.Interpreting())
	}
}

// Real guests answer on the interpreter what they answer compiled
// (TestReuseRealGuests' calls): a Go tool, whose runtime's start, describe
// and tool are the functions the interpreter translates on their first
// calls, and a C one.
func TestInterpretRealGuests(t *testing.T) {
	for _, c := range []struct {
		path             func(testing.TB) string
		tool, args, want string
	}{
		{func(t testing.TB) string { return testwasm.Go(t, "./tools-src/text") }, "text.count",
			`{"text":"the cat and the hat"}`, `{"words":5,"lines":1,"runes":19,"bytes":19}`},
		{func(t testing.TB) string { return testwasm.C(t, "tools-src-c/wordfreq") }, "wordfreq.top",
			`{"text":"the cat and the hat","top":1}`, `{"words":5,"unique":4,"top":[{"word":"the","count":2}]}`},
	} {
		t.Run(c.tool, func(t *testing.T) {
			path := c.path(t)
			rt, m, open := interpreting(t, embeddedFile(t, path, filepath.Base(path), nil))
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			for i := range 2 {
				res, err := m.Call(ctx, c.tool, []byte(c.args), host.Limits{})
				if err != nil || string(res) != c.want {
					t.Fatalf("call %d on the interpreter = %s, %v; want %s", i, res, err, c.want)
				}
			}
			if s := rt.ModuleStats(); s.Interpreted != 1 || s.Compiles != 0 || !m.Interpreting() {
				t.Fatalf("%+v, interpreting %v; want both calls on one interpreted form", s, m.Interpreting())
			}
			open()
		})
	}
}

// Without a compiler child the runtime cannot tell a module never compiled
// from one the file cache holds (a compile of milliseconds), so
// Config.Interpret does nothing: the call waits for the compile.
func TestInterpretNeedsAChild(t *testing.T) {
	rt := newRuntime(t, host.Config{CacheDir: t.TempDir(), Lazy: true, Interpret: true})
	m, err := rt.LoadFile(context.Background(), embeddedEcho(t, nil))
	if err != nil {
		t.Fatal(err)
	}
	if res, err := m.Call(context.Background(), "echo", []byte(`{"i":1}`), host.Limits{}); err != nil || string(res) != `{"i":1}` {
		t.Fatalf("call = %s, %v", res, err)
	}
	if s := rt.ModuleStats(); s.Interpreted != 0 || s.Compiles != 1 {
		t.Fatalf("%+v; want the call on the compiled module, none interpreted", s)
	}
}
