package host_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/toolhost/toolhost/host"
)

// Hostile modules for the compiler, as bytes: one function of n nested
// blocks (compile time grows with n²: 100,000 took 2.5 minutes), and one
// br_table over nested blocks (compile memory grows with its targets).
func nestedBlocks(n int) []byte {
	body := []byte{0}
	body = append(body, bytes.Repeat([]byte{0x02, 0x40}, n)...)
	body = append(body, bytes.Repeat([]byte{0x0b}, n+1)...)
	return oneFunction(body)
}

func brTableOverBlocks(blocks, targets int) []byte {
	body := []byte{0}
	body = append(body, bytes.Repeat([]byte{0x02, 0x40}, blocks)...)
	body = append(body, 0x41, 0, 0x0e)
	body = append(body, uleb(uint32(targets))...)
	for i := range targets {
		body = append(body, uleb(uint32(i%blocks))...)
	}
	body = append(body, 0)
	return oneFunction(append(body, bytes.Repeat([]byte{0x0b}, blocks+1)...))
}

func oneFunction(body []byte) []byte {
	code := append([]byte{1}, uleb(uint32(len(body)))...)
	code = append(code, body...)
	b := []byte("\x00asm\x01\x00\x00\x00")
	b = append(b, 1, 4, 1, 0x60, 0, 0) // type () -> ()
	b = append(b, 3, 2, 1, 0)          // one function
	b = append(b, 10)
	b = append(b, uleb(uint32(len(code)))...)
	return append(b, code...)
}

func uleb(v uint32) []byte {
	var b []byte
	for {
		c := byte(v & 0x7f)
		v >>= 7
		if v == 0 {
			return append(b, c)
		}
		b = append(b, c|0x80)
	}
}

// childRuntime compiles in a child process: this test binary, which
// TestMain turns into the compiler when CompileChildEnv is set.
func childRuntime(t *testing.T, lim host.CompileLimits) *host.Runtime {
	t.Helper()
	lim.Command = []string{os.Args[0]}
	return newRuntime(t, host.Config{CacheDir: t.TempDir(), Compile: lim})
}

// A module compiled in the child loads and runs as any other, from the
// cache the child filled.
func TestCompileInChild(t *testing.T) {
	rt := childRuntime(t, host.CompileLimits{})
	ctx := context.Background()
	m, err := rt.LoadFile(ctx, watPath(t, "echo"))
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close(ctx)
	if res, err := m.Call(ctx, "wat.echo", json.RawMessage(`{"x":1}`), host.Limits{}); err != nil || string(res) != `{"x":1}` {
		t.Fatalf("call: %s, %v", res, err)
	}
	if n, _ := rt.CacheEntries(); n != 1 {
		t.Fatalf("%d cache entries after a child compile; want 1", n)
	}
	// A module that does not compile is refused with the runtime's own
	// words, not as a limit.
	_, err = rt.Load(ctx, "bad.wasm", oneFunction([]byte{0, 0x6a, 0x0b})) // i32.add on an empty stack
	var cl *host.CompileLimitError
	if err == nil || errors.As(err, &cl) || !strings.Contains(err.Error(), "not a valid WebAssembly module") {
		t.Fatalf("invalid module: %v", err)
	}
}

// Issue 10 finding 5: a module that takes minutes to compile is refused at
// the compile CPU limit; before, it held the loader for 2.5 minutes.
func TestCompileBombDeadline(t *testing.T) {
	rt := childRuntime(t, host.CompileLimits{CPUTime: time.Second})
	_, err := rt.Load(context.Background(), "blocks.wasm", nestedBlocks(100000))
	var cl *host.CompileLimitError
	if !errors.As(err, &cl) || !strings.Contains(err.Error(), "did not compile within 1s of CPU time") {
		t.Fatalf("nested-block bomb: %v; want refused at the compile deadline", err)
	}
}

// Issue 10 finding 5: a module whose compilation needs more memory than
// the limit is refused at it; before, a 1 MB br_table reached 2.4 GB. This
// one (a br_table of 100,000 targets over 1,000 nested blocks, 190 KB)
// needs ~250 MiB, against a limit of 48 MiB.
func TestCompileBombMemory(t *testing.T) {
	rt := childRuntime(t, host.CompileLimits{MemoryBytes: 48 << 20})
	_, err := rt.Load(context.Background(), "brtable.wasm", brTableOverBlocks(1000, 100000))
	var cl *host.CompileLimitError
	if !errors.As(err, &cl) || !strings.Contains(err.Error(), "needed more than 48 MiB") {
		t.Fatalf("br_table bomb: %v; want refused at the memory limit", err)
	}
}

// Shutting down stops a compile in progress at once: the caller's context
// ends the child. Before, compiling ignored the context (and SIGTERM).
func TestCompileStopsWithContext(t *testing.T) {
	rt := childRuntime(t, host.CompileLimits{})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := rt.Load(ctx, "blocks.wasm", nestedBlocks(100000))
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("compile with its context cancelled: %v; want context.Canceled", err)
	}
}

// A module a compiler child compiled before, under the same limits, loads
// from the cache without another child (a restart, a warm-up, a compile
// after its code was released); other limits, or a module that did not
// compile, start one each time.
func TestCompileChildOncePerModule(t *testing.T) {
	ctx := context.Background()
	cache := t.TempDir()
	runtimeWith := func(lim host.CompileLimits) *host.Runtime {
		lim.Command = []string{os.Args[0]}
		return newRuntime(t, host.Config{CacheDir: cache, Compile: lim})
	}
	load := func(rt *host.Runtime) {
		t.Helper()
		m, err := rt.LoadFile(ctx, watPath(t, "echo"))
		if err != nil {
			t.Fatal(err)
		}
		defer m.Close(ctx)
		if res, err := m.Call(ctx, "wat.echo", json.RawMessage(`{"x":1}`), host.Limits{}); err != nil || string(res) != `{"x":1}` {
			t.Fatalf("call: %s, %v", res, err)
		}
	}
	first := runtimeWith(host.CompileLimits{})
	load(first)
	load(first)
	if n := first.CompileChildren(); n != 1 {
		t.Fatalf("%d compiler children for one module loaded twice; want 1", n)
	}
	restart := runtimeWith(host.CompileLimits{})
	load(restart)
	if n := restart.CompileChildren(); n != 0 {
		t.Fatalf("a restart started %d compiler children for a module compiled before; want 0", n)
	}
	tighter := runtimeWith(host.CompileLimits{CPUTime: 30 * time.Second})
	load(tighter)
	if n := tighter.CompileChildren(); n != 1 {
		t.Fatalf("other limits started %d compiler children; want 1", n)
	}
	bad := oneFunction([]byte{0, 0x6a, 0x0b}) // i32.add on an empty stack
	for range 2 {
		if _, err := restart.Load(ctx, "bad.wasm", bad); err == nil {
			t.Fatal("an invalid module loaded")
		}
	}
	if n := restart.CompileChildren(); n != 2 {
		t.Fatalf("an invalid module loaded twice started %d compiler children; want 2", n)
	}
}
