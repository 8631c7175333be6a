package host_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/toolhost/toolhost/host"
	"github.com/toolhost/toolhost/internal/wasmcheck"
)

func TestLoadEcho(t *testing.T) {
	rt, _, _ := sharedRuntime(t)
	path := watPath(t, "echo")
	m, err := rt.LoadFile(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close(context.Background())

	wasm, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(wasm)
	if m.Path != path || m.SHA256 != hex.EncodeToString(sum[:]) {
		t.Errorf("Path, SHA256 = %s, %s; want %s, %x", m.Path, m.SHA256, path, sum)
	}
	if len(m.Tools) != 1 {
		t.Fatalf("tools = %+v, want one", m.Tools)
	}
	tool := m.Tools[0]
	// timeout_ms is the tool's own; idempotent and read_only are the
	// module's defaults, inherited.
	if tool.Name != "wat.echo" || tool.Title != "Echo" || tool.TimeoutMS != 1000 || !tool.Idempotent || !tool.ReadOnly {
		t.Errorf("tool = %+v", tool)
	}
}

func TestLoadMisbehaveManifest(t *testing.T) {
	_, mb, _ := sharedRuntime(t)
	names := map[string]bool{}
	for _, tool := range mb.Tools {
		names[tool.Name] = true
		if tool.TimeoutMS != 30000 {
			t.Errorf("%s: timeout_ms = %d, want the ABI default 30000", tool.Name, tool.TimeoutMS)
		}
	}
	for _, want := range []string{"sleep", "spin", "panic", "gopanic", "exit", "trap", "recurse", "grow",
		"flaky", "nonce", "rand", "chatty", "huge", "now", "state", "echo", "fail"} {
		if !names[want] {
			t.Errorf("misbehave declares no tool %q", want)
		}
	}
}

// TestLoadBroken loads each broken module and checks the LoadError says
// what is wrong. describeloop runs under a 300 ms DescribeTimeout and must
// give up within it (plus generous slack for a loaded machine).
func TestLoadBroken(t *testing.T) {
	const describeTimeout = 300 * time.Millisecond
	rt := newRuntime(t, host.Config{DescribeTimeout: describeTimeout})
	cases := []struct {
		file   string
		reason []string
	}{
		{"badversion", []string{"ABI version 2", "speaks version 1"}},
		{"missingexport", []string{"missing export toolhost_call"}},
		{"command", []string{"exports _start but not _initialize", "never calls _start", "--exportStart _initialize"}},
		{"badsig", []string{"export toolhost_alloc has signature (i64) -> (i32), want (i32) -> (i32)"}},
		{"describeloop", []string{"toolhost_describe did not return within 300ms"}},
		{"describetrap", []string{"toolhost_describe failed", "unreachable"}},
		{"inittrap", []string{"_initialize failed", "unreachable"}},
		{"unknownimport", []string{"imports env.foo, which the host does not provide"}},
		{"bigmem", []string{"needs 131072000 bytes of memory at start, over the 67108864-byte limit"}},
		{"badname", []string{`name "bad name" does not match`}},
	}
	for _, tc := range cases {
		t.Run(tc.file, func(t *testing.T) {
			t.Parallel()
			path := watPath(t, tc.file)
			start := time.Now()
			m, err := rt.LoadFile(context.Background(), path)
			took := time.Since(start)
			if err == nil {
				m.Close(context.Background())
				t.Fatal("loaded; want a LoadError")
			}
			var le *host.LoadError
			if !errors.As(err, &le) {
				t.Fatalf("error %T %v is not a *host.LoadError", err, err)
			}
			if le.Path != path {
				t.Errorf("Path = %q, want %q", le.Path, path)
			}
			for _, want := range tc.reason {
				if !strings.Contains(le.Reason, want) {
					t.Errorf("Reason %q does not contain %q", le.Reason, want)
				}
			}
			if took > describeTimeout+2*time.Second {
				t.Errorf("load took %v, DescribeTimeout is %v", took, describeTimeout)
			}
		})
	}
}

func TestLoadNotWasm(t *testing.T) {
	rt, _, _ := sharedRuntime(t)
	_, err := rt.Load(context.Background(), "junk.wasm", []byte("this is text, not wasm"))
	var le *host.LoadError
	if !errors.As(err, &le) || le.Path != "junk.wasm" || !strings.Contains(le.Reason, "not a valid WebAssembly module") {
		t.Fatalf("err = %v, want a LoadError saying it is not WebAssembly", err)
	}
	_, err = rt.LoadFile(context.Background(), filepath.Join(t.TempDir(), "missing.wasm"))
	if !errors.As(err, &le) || !strings.Contains(le.Reason, "cannot read") {
		t.Fatalf("err = %v, want a LoadError saying the file cannot be read", err)
	}
}

// TestLoadMemoryLimit: the runtime's memory limit applies at load too; a
// per-call limit under the module's minimum fails the call, not the host.
func TestLoadMemoryLimit(t *testing.T) {
	rt := newRuntime(t, host.Config{Limits: host.Limits{MemoryBytes: 2 << 20}})
	_, err := rt.LoadFile(context.Background(), misbehavePath)
	var le *host.LoadError
	if !errors.As(err, &le) || !strings.Contains(le.Reason, "over the 2097152-byte limit") {
		t.Fatalf("err = %v, want a LoadError about the memory limit", err)
	}

	_, mb, _ := sharedRuntime(t)
	_, err = mb.Call(context.Background(), "state", []byte(`{}`), host.Limits{MemoryBytes: 1 << 20})
	var f *host.Fault
	if !errors.As(err, &f) || !strings.Contains(f.Reason, "over the 1048576-byte limit") {
		t.Fatalf("err = %v, want a Fault about the memory limit", err)
	}
}

// TestCompilationCache: a runtime with a CacheDir writes compiled code
// there, and a second runtime on the same folder loads from it.
func TestCompilationCache(t *testing.T) {
	dir := t.TempDir()
	for i := range 2 {
		rt := newRuntime(t, host.Config{CacheDir: dir})
		m, err := rt.LoadFile(context.Background(), watPath(t, "echo"))
		if err != nil {
			t.Fatalf("runtime %d: %v", i, err)
		}
		if res, err := m.Call(context.Background(), "wat.echo", []byte(`"x"`), host.Limits{}); err != nil || string(res) != `"x"` {
			t.Fatalf("runtime %d: call = %s, %v", i, res, err)
		}
		entries, _ := os.ReadDir(dir)
		if len(entries) == 0 {
			t.Fatalf("runtime %d: cache folder %s is empty", i, dir)
		}
	}
	rt := newRuntime(t, host.Config{CacheDir: "off"})
	if _, err := rt.LoadFile(context.Background(), watPath(t, "echo")); err != nil {
		t.Fatalf(`CacheDir "off": %v`, err)
	}
}

// TestIdentityOfARewrittenModule: a Go module is compiled with its data
// segments joined (wasmcheck.CoalesceData), yet its identity, in every
// name, cache key and event, is the sha256 of the file as it is.
func TestIdentityOfARewrittenModule(t *testing.T) {
	_, mb, _ := sharedRuntime(t)
	wasm, err := os.ReadFile(misbehavePath)
	if err != nil {
		t.Fatal(err)
	}
	checked, err := wasmcheck.Check(wasm)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Equal(wasmcheck.CoalesceData(checked), wasm) {
		t.Fatal("the Go fixture's data segments were not joined: the test proves nothing")
	}
	if sum := sha256.Sum256(wasm); mb.SHA256 != hex.EncodeToString(sum[:]) {
		t.Errorf("SHA256 = %s, want the file's %x", mb.SHA256, sum)
	}
}

// TestLoadCommandModule: a WASI command (exports _start, not _initialize)
// is refused with a typed error saying how to build a reactor; the Go
// and C reactors, which export _initialize, load (TestLoadBroken's
// neighbours and the C tests).
func TestLoadCommandModule(t *testing.T) {
	rt, _, _ := sharedRuntime(t)
	_, err := rt.LoadFile(context.Background(), watPath(t, "command"))
	var ce *host.CommandError
	if !errors.As(err, &ce) {
		t.Fatalf("err = %v, want a *host.CommandError", err)
	}
}
