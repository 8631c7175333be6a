package snapshot_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/toolhost/toolhost/third_party/wazero"
	"github.com/toolhost/toolhost/third_party/wazero/experimental"
	"github.com/toolhost/toolhost/third_party/wazero/experimental/snapshot"
	"github.com/toolhost/toolhost/third_party/wazero/imports/wasi_snapshot_preview1"
	"github.com/toolhost/toolhost/third_party/wazero/internal/testing/binaryencoding"
	"github.com/toolhost/toolhost/third_party/wazero/internal/wasm"
)

const i32 = wasm.ValueTypeI32

var void = []wasm.FunctionType{{}}

// counterModule's start section adds 1 to its global g, and its exported
// init (a start function of the config's) adds 10 and stores 42 at 32:
// an instance that ran both once has g = 11.
var counterModule = binaryencoding.EncodeModule(&wasm.Module{
	TypeSection:     void,
	FunctionSection: []wasm.Index{0, 0},
	CodeSection: []wasm.Code{
		{Body: []byte{
			wasm.OpcodeGlobalGet, 0, wasm.OpcodeI32Const, 1, wasm.OpcodeI32Add, wasm.OpcodeGlobalSet, 0,
			wasm.OpcodeEnd,
		}},
		{Body: []byte{
			wasm.OpcodeI32Const, 32, wasm.OpcodeI32Const, 42, wasm.OpcodeI32Store, 2, 0,
			wasm.OpcodeGlobalGet, 0, wasm.OpcodeI32Const, 10, wasm.OpcodeI32Add, wasm.OpcodeGlobalSet, 0,
			wasm.OpcodeEnd,
		}},
	},
	MemorySection: &wasm.Memory{Min: 1, Cap: 1, Max: 2, IsMaxEncoded: true},
	GlobalSection: []wasm.Global{{Type: wasm.GlobalType{ValType: i32, Mutable: true},
		Init: wasm.NewConstantExpressionFromOpcode(wasm.OpcodeI32Const, []byte{0})}},
	ExportSection: []wasm.Export{
		{Name: "init", Type: wasm.ExternTypeFunc, Index: 1},
		{Name: "memory", Type: wasm.ExternTypeMemory, Index: 0},
		{Name: "g", Type: wasm.ExternTypeGlobal, Index: 0},
	},
	StartSection: new(wasm.Index(0)),
})

// importsMemory imports env.memory and has nothing else.
var importsMemory = binaryencoding.EncodeModule(&wasm.Module{
	ImportSection: []wasm.Import{{Module: "env", Name: "memory", Type: wasm.ExternTypeMemory,
		DescMem: &wasm.Memory{Min: 1, Cap: 1, Max: 1, IsMaxEncoded: true}}},
	ImportMemoryCount: 1,
})

// exportsMemory is env: a memory of one page.
var exportsMemory = binaryencoding.EncodeModule(&wasm.Module{
	MemorySection: &wasm.Memory{Min: 1, Cap: 1, Max: 1, IsMaxEncoded: true},
	ExportSection: []wasm.Export{{Name: "memory", Type: wasm.ExternTypeMemory, Index: 0}},
})

// closesStdin's start section closes file descriptor 0 through WASI.
var closesStdin = binaryencoding.EncodeModule(&wasm.Module{
	TypeSection: []wasm.FunctionType{{}, {Params: []wasm.ValueType{i32}, Results: []wasm.ValueType{i32},
		ParamNumInUint64: 1, ResultNumInUint64: 1}},
	ImportSection:       []wasm.Import{{Module: "wasi_snapshot_preview1", Name: "fd_close", Type: wasm.ExternTypeFunc, DescFunc: 1}},
	ImportFunctionCount: 1,
	FunctionSection:     []wasm.Index{0},
	CodeSection: []wasm.Code{{Body: []byte{
		wasm.OpcodeI32Const, 0, wasm.OpcodeCall, 0, wasm.OpcodeDrop, wasm.OpcodeEnd,
	}}},
	StartSection: new(wasm.Index(1)),
})

func newRuntime(t *testing.T) wazero.Runtime {
	t.Helper()
	ctx := context.Background()
	r := wazero.NewRuntime(ctx)
	t.Cleanup(func() { _ = r.Close(ctx) })
	return r
}

func compile(t *testing.T, r wazero.Runtime, bin []byte) wazero.CompiledModule {
	t.Helper()
	c, err := r.CompileModule(context.Background(), bin)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestRestore: a restored instance has the globals and memory its start
// functions left, in every instance made from the snapshot, and runs
// neither the start section nor the config's start functions again.
func TestRestore(t *testing.T) {
	ctx := context.Background()
	r := newRuntime(t)
	c := compile(t, r, counterModule)
	cfg := wazero.NewModuleConfig().WithStartFunctions("init")
	src, err := r.InstantiateModule(snapshot.Prepare(ctx), c, cfg.WithName("src"))
	if err != nil {
		t.Fatal(err)
	}
	snap, err := snapshot.Take(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := src.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if snap.MemoryPages() != 1 || snap.MemoryBytes() != 4096 {
		t.Errorf("snapshot of %d pages holding %d bytes, want 1 page, one 4 KiB block", snap.MemoryPages(), snap.MemoryBytes())
	}
	for i, name := range []string{"a", "b"} {
		m, err := r.InstantiateModule(snapshot.Restore(ctx, snap), c, cfg.WithName(name))
		if err != nil {
			t.Fatal(err)
		}
		if g := m.ExportedGlobal("g").Get(); g != 11 {
			t.Errorf("instance %d: g = %d, want 11 (start section and init run once, in the source)", i, g)
		}
		if v, ok := m.Memory().ReadUint32Le(32); !ok || v != 42 {
			t.Errorf("instance %d: memory at 32 = %d, %v; want 42", i, v, ok)
		}
		// Each instance's memory is its own.
		m.Memory().WriteUint32Le(32, 7)
		_ = m.Close(ctx)
	}
}

// garbage is a memory allocator whose memory holds 0xa5 below dirty bytes
// and zero past them, as a reused buffer does.
type garbage struct{ dirty uint64 }

func (g garbage) Allocate(_, maxBytes uint64) experimental.LinearMemory {
	buf := make([]byte, 0, maxBytes)
	for range g.dirty {
		buf = append(buf, 0xa5)
	}
	return &linear{buf: buf[:0]}
}

type linear struct{ buf []byte }

func (l *linear) Reallocate(size uint64) []byte {
	if size > uint64(cap(l.buf)) {
		return nil
	}
	l.buf = l.buf[:size]
	return l.buf
}

func (l *linear) Free() {}

// TestRestoreOver: over memory that holds a previous instance's bytes, a
// restore writes every byte of the snapshot's memory.
func TestRestoreOver(t *testing.T) {
	ctx := context.Background()
	r := newRuntime(t)
	c := compile(t, r, counterModule)
	cfg := wazero.NewModuleConfig().WithStartFunctions("init")
	src, err := r.InstantiateModule(snapshot.Prepare(ctx), c, cfg.WithName("src"))
	if err != nil {
		t.Fatal(err)
	}
	snap, err := snapshot.Take(src)
	if err != nil {
		t.Fatal(err)
	}
	actx := experimental.WithMemoryAllocator(snapshot.RestoreOver(ctx, snap), garbage{dirty: 65536})
	m, err := r.InstantiateModule(actx, c, cfg.WithName("over"))
	if err != nil {
		t.Fatal(err)
	}
	buf, ok := m.Memory().Read(0, 65536)
	if !ok {
		t.Fatal("memory is not one page")
	}
	for i, b := range buf {
		want := byte(0)
		if i == 32 {
			want = 42
		}
		if b != want {
			t.Fatalf("byte %d = %#x after the restore, want %#x", i, b, want)
		}
	}
}

// TestTakeRefuses: the instances a restore could not rebuild faithfully.
func TestTakeRefuses(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name, want string
		make       func(t *testing.T, r wazero.Runtime) (snapCtx context.Context, bin []byte)
	}{
		{"not-prepared", "not instantiated for one", func(*testing.T, wazero.Runtime) (context.Context, []byte) {
			return ctx, counterModule
		}},
		{"imported-memory", "memory is imported", func(t *testing.T, r wazero.Runtime) (context.Context, []byte) {
			if _, err := r.InstantiateWithConfig(ctx, exportsMemory, wazero.NewModuleConfig().WithName("env")); err != nil {
				t.Fatal(err)
			}
			return snapshot.Prepare(ctx), importsMemory
		}},
		{"closed-file", "opened or closed files", func(t *testing.T, r wazero.Runtime) (context.Context, []byte) {
			wasi_snapshot_preview1.MustInstantiate(ctx, r)
			return snapshot.Prepare(ctx), closesStdin
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRuntime(t)
			sctx, bin := tc.make(t, r)
			m, err := r.InstantiateModule(sctx, compile(t, r, bin), wazero.NewModuleConfig().WithName(""))
			if err != nil {
				t.Fatal(err)
			}
			defer m.Close(ctx)
			_, err = snapshot.Take(m)
			if !errors.Is(err, snapshot.ErrUnsupported) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Take = %v, want ErrUnsupported saying %q", err, tc.want)
			}
		})
	}
	t.Run("closed", func(t *testing.T) {
		r := newRuntime(t)
		m, err := r.InstantiateModule(snapshot.Prepare(ctx), compile(t, r, counterModule), wazero.NewModuleConfig())
		if err != nil {
			t.Fatal(err)
		}
		_ = m.Close(ctx)
		if _, err := snapshot.Take(m); !errors.Is(err, snapshot.ErrUnsupported) {
			t.Fatalf("Take of a closed instance = %v, want ErrUnsupported", err)
		}
	})
}

// TestRestoreOtherModule: a snapshot restores only into the module it was
// taken of.
func TestRestoreOtherModule(t *testing.T) {
	ctx := context.Background()
	r := newRuntime(t)
	m, err := r.InstantiateModule(snapshot.Prepare(ctx), compile(t, r, counterModule), wazero.NewModuleConfig().WithName("src"))
	if err != nil {
		t.Fatal(err)
	}
	snap, err := snapshot.Take(m)
	if err != nil {
		t.Fatal(err)
	}
	_, err = r.InstantiateModule(snapshot.Restore(ctx, snap), compile(t, r, exportsMemory), wazero.NewModuleConfig().WithName("other"))
	if err == nil || !strings.Contains(err.Error(), "another module") {
		t.Fatalf("restoring into another module: %v, want refused", err)
	}
}
