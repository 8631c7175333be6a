package host_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/toolhost/toolhost/host"
	"github.com/toolhost/toolhost/internal/testkit/testwasm"
)

// snapshotRuntime is a runtime of the test's own whose instances of the
// module at path start from its snapshot (Config.Snapshot), logging to the
// returned buffer.
func snapshotRuntime(t *testing.T, path string) (*host.Runtime, *bytes.Buffer) {
	t.Helper()
	var logs bytes.Buffer
	rt := newRuntime(t, host.Config{Snapshot: map[string]bool{filepath.Base(path): true},
		Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	return rt, &logs
}

// load loads the module at path into rt, closed when the test ends.
func load(t *testing.T, rt *host.Runtime, path string) *host.Module {
	t.Helper()
	m, err := rt.LoadFile(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.Close(context.Background()) })
	return m
}

// TestSnapshotRestoresInitState: an instance restored from the snapshot
// has what _initialize left (a grown memory, the bytes it copied there, a
// dropped segment, its global) and has not run _initialize again, call
// after call; without the option the same module answers the same.
func TestSnapshotRestoresInitState(t *testing.T) {
	path := watPath(t, "snapinit")
	rt, logs := snapshotRuntime(t, path)
	m := load(t, rt, path)
	if m.HoldsSnapshot() {
		t.Error("the module holds its snapshot after load; it must let it go until a call needs it")
	}
	plain := load(t, newRuntime(t, host.Config{}), path)
	ctx := context.Background()
	for i := range 3 {
		for _, mod := range []*host.Module{m, plain} {
			res, err := mod.Call(ctx, "wat.snapinit", []byte(`{}`), host.Limits{})
			if err != nil || string(res) != "121083" {
				t.Fatalf("call %d = %s, %v; want 121083 (one _initialize, one call)", i, res, err)
			}
		}
	}
	if !m.HoldsSnapshot() {
		t.Fatal("no snapshot after calls")
	}
	if !strings.Contains(logs.String(), "took a snapshot") {
		t.Errorf("no debug line for the snapshot in:\n%s", logs)
	}
	t.Run("dropped-segment", func(t *testing.T) {
		// The segment _initialize dropped stays dropped: reading it traps,
		// as it does in an instance that ran _initialize itself.
		for _, mod := range []*host.Module{m, plain} {
			res, err := mod.Call(ctx, "wat.snapinit", []byte(`{"do":"d"}`), host.Limits{})
			check(t, res, err, outcome{fault: "out of bounds memory access"})
		}
	})
	t.Run("memory-limit", func(t *testing.T) {
		// A tool allowed one page cannot hold the snapshot's two: its
		// instance runs _initialize, which fails there as it would without
		// a snapshot, and the next call with room is restored again.
		for _, mod := range []*host.Module{m, plain} {
			res, err := mod.Call(ctx, "wat.snapinit", []byte(`{}`), host.Limits{MemoryBytes: 65536})
			check(t, res, err, outcome{fault: "_initialize"})
			if res, err := mod.Call(ctx, "wat.snapinit", []byte(`{}`), host.Limits{}); err != nil || string(res) != "121083" {
				t.Fatalf("call after the limited one = %s, %v", res, err)
			}
		}
	})
	t.Run("idle", func(t *testing.T) {
		m.Idle()
		if m.HoldsSnapshot() {
			t.Fatal("an idle module still holds its snapshot")
		}
		if res, err := m.Call(ctx, "wat.snapinit", []byte(`{}`), host.Limits{}); err != nil || string(res) != "121083" {
			t.Fatalf("call after idle = %s, %v", res, err)
		}
		if !m.HoldsSnapshot() {
			t.Fatal("the call after idle made no snapshot")
		}
	})
}

// TestSnapshotRefused: a module whose _initialize changes its table cannot
// be restored faithfully; the host says so once, at load, and every
// instance runs _initialize (a call without it would trap).
func TestSnapshotRefused(t *testing.T) {
	path := watPath(t, "snaptable")
	rt, logs := snapshotRuntime(t, path)
	m := load(t, rt, path)
	for i := range 3 {
		res, err := m.Call(context.Background(), "wat.snaptable", []byte(`{}`), host.Limits{})
		if err != nil || string(res) != "7" {
			t.Fatalf("call %d = %s, %v; want 7", i, res, err)
		}
	}
	if m.HoldsSnapshot() {
		t.Error("the module holds a snapshot it cannot restore")
	}
	if n := strings.Count(logs.String(), "cannot start from a snapshot"); n != 1 || !strings.Contains(logs.String(), "changed table 0") {
		t.Errorf("want one warning naming the table, got %d in:\n%s", n, logs)
	}
}

// TestSnapshotGoGuest runs the misbehave module's cases from its snapshot:
// every outcome (deadlines, traps, exits, memory and output caps) is what
// a fresh instance gives, and calls share no state. crypto/rand still
// reads the host's randomness; math/rand's seed, drawn in _initialize,
// repeats from call to call, which is why the option is the operator's.
func TestSnapshotGoGuest(t *testing.T) {
	path := misbehavePath
	rt, logs := snapshotRuntime(t, path)
	mb := load(t, rt, path)
	ctx := context.Background()
	t.Run("state", func(t *testing.T) {
		for i := range 2 {
			if res, err := mb.Call(ctx, "state", []byte(`{}`), host.Limits{}); err != nil || string(res) != "1" {
				t.Fatalf("call %d: state = %s, %v; want 1 (a fresh instance)", i, res, err)
			}
		}
		if !mb.HoldsSnapshot() || strings.Contains(logs.String(), "cannot start from a snapshot") {
			t.Fatalf("the misbehave module was not restored from a snapshot:\n%s", logs)
		}
	})
	t.Run("nonce", func(t *testing.T) {
		a := callString(t, mb, "nonce")
		if b := callString(t, mb, "nonce"); a == b {
			t.Fatalf("crypto/rand gave %s twice: the snapshot holds randomness it must not", a)
		}
	})
	t.Run("math-rand-repeats", func(t *testing.T) {
		// The documented cost of the option (Config.Snapshot): if this
		// fails, the docs are wrong, not the snapshot.
		a, b := callString(t, mb, "rand"), callString(t, mb, "rand")
		if a != b {
			t.Fatalf("math/rand gave %s then %s: its seed is no longer drawn in _initialize; update Config.Snapshot's doc", a, b)
		}
		plain := load(t, newRuntime(t, host.Config{}), path)
		if c, d := callString(t, plain, "rand"), callString(t, plain, "rand"); c == d {
			t.Fatalf("math/rand gave %s twice without a snapshot", c)
		}
	})
	// Its subtests are parallel: they run once this function returns.
	callMisbehave(t, mb)
}

func callString(t *testing.T, m *host.Module, tool string) string {
	t.Helper()
	res, err := m.Call(context.Background(), tool, []byte(`{}`), host.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	var v any
	if err := json.Unmarshal(res, &v); err != nil {
		t.Fatalf("%s = %s: %v", tool, res, err)
	}
	return string(res)
}

// TestSnapshotWarmInstances: warm instances start from the snapshot too,
// and keep one caller's state while never showing it to another.
func TestSnapshotWarmInstances(t *testing.T) {
	t.Run("counter", func(t *testing.T) {
		path := watPath(t, "counter")
		rt, _ := snapshotRuntime(t, path)
		m := load(t, rt, path)
		expect(t, m,
			[3]string{"alice", "n", "1"},
			[3]string{"alice", "n", "2"},
			[3]string{"bob", "n", "1"},
			[3]string{"alice", "n", "3"},
		)
	})
	t.Run("go", func(t *testing.T) {
		path := testwasm.Go(t, "./tools-src/text")
		rt, logs := snapshotRuntime(t, path)
		m := load(t, rt, path)
		for i, c := range []struct{ caller, text, want string }{
			{"alice", "one two", `{"words":2,"lines":1,"runes":7,"bytes":7}`},
			{"alice", "a b c", `{"words":3,"lines":1,"runes":5,"bytes":5}`},
			{"bob", "x", `{"words":1,"lines":1,"runes":1,"bytes":1}`},
		} {
			res, err := m.Do(context.Background(), host.Request{Tool: "text.count", Caller: c.caller, Reuse: true,
				Args: []byte(`{"text":"` + c.text + `"}`)})
			if err != nil || string(res) != c.want {
				t.Fatalf("call %d = %s, %v; want %s", i, res, err, c.want)
			}
		}
		if !m.HoldsSnapshot() || strings.Contains(logs.String(), "cannot start from a snapshot") {
			t.Fatalf("the text module was not restored from a snapshot:\n%s", logs)
		}
	})
}

// TestSnapshotConcurrent: calls at once while the snapshot is made, used
// and dropped (as an idle sweep does) each get a fresh instance of their
// own; run it with -race.
func TestSnapshotConcurrent(t *testing.T) {
	path := misbehavePath
	rt, _ := snapshotRuntime(t, path)
	mb := load(t, rt, path)
	ctx := context.Background()
	stop := make(chan struct{})
	dropped := make(chan struct{})
	go func() {
		defer close(dropped)
		for {
			select {
			case <-stop:
				return
			default:
				mb.Idle()
				runtime.Gosched()
			}
		}
	}()
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for range 8 {
		wg.Go(func() {
			for range 10 {
				res, err := mb.Call(ctx, "state", []byte(`{}`), host.Limits{})
				if err != nil || string(res) != "1" {
					errs <- fmt.Errorf("state = %s, %v; want 1", res, err)
					return
				}
			}
		})
	}
	wg.Wait()
	close(stop)
	<-dropped
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}
