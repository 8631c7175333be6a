//go:build unix

package host_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"testing"
	"time"

	"github.com/toolhost/toolhost/host"
	"github.com/toolhost/toolhost/internal/testkit/testwasm"
)

// A cold Go module without a manifest section is listed from its describe
// on the interpreter, with every compile held: the same tools as a
// compile lists, a describe cache entry for the next start, and calls
// that answer on the interpreter until the compile is let go.
func TestListInterpretedWithoutCompiling(t *testing.T) {
	path := testwasm.Go(t, "./tools-src/text")
	compiled := newRuntime(t, host.Config{CacheDir: t.TempDir()})
	want, err := compiled.LoadFile(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	child, open := gatedChild(t)
	rt := newRuntime(t, host.Config{CacheDir: t.TempDir(), Lazy: true, Interpret: true, Compile: host.CompileLimits{Command: child}})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	m, err := rt.LoadFile(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	if s := rt.ModuleStats(); s.ListedInterpreted != 1 || s.Compiles != 0 || m.Resident() || m.Unverified() {
		t.Fatalf("%+v, resident %v, unverified %v; want it listed uncompiled, from its own describe", s, m.Resident(), m.Unverified())
	}
	if got, w := mustJSON(t, m.Tools), mustJSON(t, want.Tools); got != w {
		t.Fatalf("tools listed from the interpreter:\n%s\nfrom the compiler:\n%s", got, w)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(b)
	if !rt.Listable(hex.EncodeToString(sum[:]), b) {
		t.Error("no describe cache entry written: the next start would describe it again")
	}
	res, err := m.Call(ctx, "text.count", []byte(`{"text":"the cat and the hat"}`), host.Limits{})
	if want := `{"words":5,"lines":1,"runes":19,"bytes":19}`; err != nil || string(res) != want {
		t.Fatalf("call = %s, %v; want %s", res, err, want)
	}
	if s := rt.ModuleStats(); s.Interpreted != 1 || s.Compiles != 0 {
		t.Fatalf("%+v; want the call on an interpreted form, the compile still held", s)
	}
	open()
}

// Off, or without a compiler child, the module compiles to be listed.
func TestListInterpretedOff(t *testing.T) {
	path := testwasm.Go(t, "./tools-src/text")
	child := host.CompileLimits{Command: []string{os.Args[0]}}
	for _, cfg := range []host.Config{
		{CacheDir: t.TempDir(), Lazy: true, Compile: child},
		{CacheDir: t.TempDir(), Lazy: true, Interpret: true},
	} {
		rt := newRuntime(t, cfg)
		if _, err := rt.LoadFile(context.Background(), path); err != nil {
			t.Fatal(err)
		}
		if s := rt.ModuleStats(); s.ListedInterpreted != 0 || s.Compiles != 1 {
			t.Fatalf("interpret %v, child %v: %+v; want a compile", cfg.Interpret, cfg.Compile.Command, s)
		}
	}
}

// A module the interpreter cannot describe is compiled and refused with
// the compile's reason, as without Config.Interpret: TestLoadBroken's
// cases on a runtime that lists from the interpreter.
func TestListInterpretedBroken(t *testing.T) {
	rt := newRuntime(t, host.Config{CacheDir: t.TempDir(), Lazy: true, Interpret: true,
		DescribeTimeout: 300 * time.Millisecond, Compile: host.CompileLimits{Command: []string{os.Args[0]}}})
	plain := newRuntime(t, host.Config{CacheDir: t.TempDir(), DescribeTimeout: 300 * time.Millisecond})
	for _, file := range []string{"badversion", "missingexport", "command", "badsig", "describeloop",
		"describetrap", "inittrap", "unknownimport", "bigmem", "badname"} {
		t.Run(file, func(t *testing.T) {
			path := watPath(t, file)
			_, err := rt.LoadFile(context.Background(), path)
			_, want := plain.LoadFile(context.Background(), path)
			var le, wantLE *host.LoadError
			if !errors.As(err, &le) || !errors.As(want, &wantLE) || le.Reason != wantLE.Reason {
				t.Fatalf("err = %v; without the interpreter %v", err, want)
			}
		})
	}
	if s := rt.ModuleStats(); s.ListedInterpreted != 0 {
		t.Fatalf("%+v: a broken module was listed", s)
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
