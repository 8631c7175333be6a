package host_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/toolhost/toolhost/dispatcher"
	"github.com/toolhost/toolhost/host"
)

// Prepare does a lazy module's waits before the call: it compiles the
// code and takes the call's admission slot, the call that follows uses
// both without queueing again (with one slot, a second wait would never
// end), and done gives them back.
func TestPrepareCompilesAndAdmitsBeforeTheCall(t *testing.T) {
	cache, path := describedOnce(t, "echo")
	rt := newRuntime(t, host.Config{CacheDir: cache, Lazy: true, MaxFresh: 1})
	m, err := rt.LoadFile(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	if m.Resident() {
		t.Fatal("listed from the describe cache, yet compiled")
	}
	ctx, done, err := m.Prepare(context.Background(), host.Request{Tool: "echo"})
	if err != nil {
		t.Fatal(err)
	}
	if s := rt.AdmissionStats(); !m.Resident() || s.InUse != 1 {
		t.Fatalf("after Prepare: resident %v, admission %+v; want compiled and one slot held", m.Resident(), s)
	}
	res, err := m.Do(ctx, host.Request{Tool: "echo", Args: []byte(`{"a":1}`)})
	if err != nil || string(res) != `{"a":1}` {
		t.Fatalf("prepared call: %s, %v", res, err)
	}
	done()
	if s := rt.AdmissionStats(); s.InUse != 0 || s.Waited != 0 {
		t.Fatalf("after done: %+v; want the slot given back, no call having queued", s)
	}
	if res, err := m.Do(context.Background(), host.Request{Tool: "echo", Args: []byte(`{}`)}); err != nil || string(res) != `{}` {
		t.Fatalf("unprepared call after: %s, %v", res, err)
	}
}

// A Prepare whose context ends in the queue gives back the code it held
// and reports the context's error; one whose module cannot be compiled
// any more reports what the call would have.
func TestPrepareErrors(t *testing.T) {
	cache, path := describedOnce(t, "echo")
	rt := newRuntime(t, host.Config{CacheDir: cache, Lazy: true, MaxFresh: 1})
	m, err := rt.LoadFile(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Do(context.Background(), host.Request{Tool: "echo"}); err != nil {
		t.Fatal(err) // compiles the code: Prepare goes on to the queue
	}
	leave, err := rt.TakeSlot(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, _, err := m.Prepare(ctx, host.Request{Tool: "echo"}); !errors.Is(err, context.Canceled) {
		t.Fatalf("Prepare cancelled in the queue: %v; want context.Canceled", err)
	}
	leave()
	if s := rt.AdmissionStats(); s.InUse != 0 || s.Starved != 1 {
		t.Fatalf("admission %+v; want nothing held, one starved", s)
	}

	// Changed on disk since it was listed: the call's own error.
	cache2, path2 := describedOnce(t, "echo")
	rt2 := newRuntime(t, host.Config{CacheDir: cache2, Lazy: true})
	m2, err := rt2.LoadFile(context.Background(), path2)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path2, []byte("\x00asm\x01\x00\x00\x00"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, _, perr := m2.Prepare(context.Background(), host.Request{Tool: "echo"})
	_, derr := m2.Do(context.Background(), host.Request{Tool: "echo"})
	if perr == nil || derr == nil || perr.Error() != derr.Error() {
		t.Fatalf("Prepare: %v; Do: %v; want the same error", perr, derr)
	}
}

// A compile on demand cut short by its context (the runtime closing: a
// restart during the warm-up) keeps the module's describe cache entry, so
// the next start still lists it at once; it used to delete it.
func TestCompileCutShortKeepsDescribeEntry(t *testing.T) {
	cache, path := describedOnce(t, "echo")
	// In a child process, as serve compiles: its end is the context's.
	rt := newRuntime(t, host.Config{CacheDir: cache, Lazy: true, Compile: host.CompileLimits{Command: []string{os.Args[0]}}})
	m, err := rt.LoadFile(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := m.Recompile(ctx); err == nil {
		t.Fatal("a compile under an ended context succeeded: the test proves nothing")
	}
	if !rt.Listable(m.SHA256, nil) {
		t.Fatal("the describe cache entry was deleted by a compile cut short")
	}
}

// Through the dispatcher, a first call whose module must compile for
// longer than the tool's timeout (200 ms) succeeds: the compile (here
// held by a compiler child that waits for the test) is waited for under
// the caller's deadline, and the attempt's timeout starts after it. On
// the old path the compile ran in the attempt's timeout, which ended it.
func TestCompileWaitIsNotTheToolsTimeout(t *testing.T) {
	const timeout = 200 * time.Millisecond
	cache, path := describedOnce(t, "echo")
	gate := filepath.Join(t.TempDir(), "gate")
	if err := syscall.Mkfifo(gate, 0o600); err != nil {
		t.Skipf("no fifo: %v", err)
	}
	// The compiler child (this test binary, see TestMain) starts only
	// once the test writes to the fifo.
	child := []string{"/bin/sh", "-c", `read x < "$0"; exec "$1"`, gate, os.Args[0]}
	rt := newRuntime(t, host.Config{CacheDir: cache, Lazy: true, Compile: host.CompileLimits{Command: child}})
	m, err := rt.LoadFile(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	if m.Resident() {
		t.Fatal("listed from the describe cache, yet compiled")
	}
	d := timedDispatcher(t, m, "wat.echo", timeout)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	done := make(chan error, 1)
	go func() {
		one := 1 // no retry to hide a first attempt that timed out
		res, err := d.Call(ctx, dispatcher.Call{Tool: "wat.echo", Args: []byte(`{"k":3}`), Options: dispatcher.Options{Budget: &one}})
		if err == nil && string(res) != `{"k":3}` {
			err = fmt.Errorf("result %s", res)
		}
		done <- err
	}()
	// Hold the compile for twice the tool's timeout: the call cannot end
	// meanwhile (it has no code), unless its timeout runs in the wait.
	select {
	case err := <-done:
		t.Fatalf("the call ended while its module was not compiled: %v", err)
	case <-time.After(2 * timeout):
	}
	f, err := os.OpenFile(gate, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintln(f, "go")
	f.Close()
	if err := <-done; err != nil {
		t.Fatalf("call after the compile: %v; want its result", err)
	}
}

// A call that may run in one of its caller's warm instances takes no
// admission slot in Prepare (a reused instance makes no fresh one): with
// the only slot taken it still runs.
func TestPrepareReuseTakesNoSlot(t *testing.T) {
	rt := newRuntime(t, host.Config{MaxFresh: 1})
	m, err := rt.LoadFile(context.Background(), watPath(t, "counter"))
	if err != nil {
		t.Fatal(err)
	}
	leave, err := rt.TakeSlot(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer leave()
	req := host.Request{Tool: "counter.reuse", Args: []byte(`{}`), Reuse: true}
	ctx, done, err := m.Prepare(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Do(ctx, req); err != nil {
		t.Fatalf("reuse call with no slot free: %v", err)
	}
	done()
	if s := rt.AdmissionStats(); s.Waited != 0 || s.InUse != 1 {
		t.Fatalf("admission %+v; want only the test's slot, nobody queued", s)
	}
	// A fresh call would queue: Prepare waits, and gives up with its context.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, _, err := m.Prepare(ctx, host.Request{Tool: "counter.fresh"}); !errors.Is(err, context.Canceled) {
		t.Fatalf("fresh Prepare with no slot free: %v; want it to queue until its context ended", err)
	}
}
