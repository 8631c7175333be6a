package wasmcheck

import (
	"bytes"
	"context"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolhost/toolhost/internal/testkit/testwasm"
	"github.com/toolhost/toolhost/third_party/wazero"
	"github.com/toolhost/toolhost/third_party/wazero/experimental"
	"github.com/toolhost/toolhost/third_party/wazero/imports/wasi_snapshot_preview1"
)

// dataRuntime instantiates modules without running anything in them, so
// that an instance's memory is exactly what its data segments wrote.
type dataRuntime struct{ rt wazero.Runtime }

func newDataRuntime(t testing.TB) *dataRuntime {
	ctx := context.Background()
	rt := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfigInterpreter())
	t.Cleanup(func() { rt.Close(ctx) })
	wasi_snapshot_preview1.MustInstantiate(ctx, rt)
	testwasm.StubToolhostV1(t, rt)
	return &dataRuntime{rt: rt}
}

// memory returns the memory of a fresh instance of wasm, before any of its
// code has run, or the instantiation error.
func (d *dataRuntime) memory(t testing.TB, wasm []byte) ([]byte, error) {
	t.Helper()
	return d.memoryIn(t, context.Background(), wasm)
}

// memoryIn is memory, instantiating with ctx (its memory allocator).
func (d *dataRuntime) memoryIn(t testing.TB, ctx context.Context, wasm []byte) ([]byte, error) {
	t.Helper()
	c, err := d.rt.CompileModule(ctx, wasm)
	if err != nil {
		t.Fatalf("compiling: %v", err)
	}
	defer c.Close(ctx)
	mod, err := d.rt.InstantiateModule(ctx, c, wazero.NewModuleConfig().WithName("").WithStartFunctions())
	if err != nil {
		return nil, err
	}
	defer mod.Close(ctx)
	mem, _ := mod.Memory().Read(0, mod.Memory().Size())
	return bytes.Clone(mem), nil
}

// memoryOver is memory for an instance whose memory starts as a reused
// buffer would if only the bytes of written were left uncleared: 0xa5
// there, zero elsewhere. When written is every byte instantiation writes,
// the result is memory's.
func (d *dataRuntime) memoryOver(t testing.TB, wasm []byte, written []Span) ([]byte, error) {
	t.Helper()
	return d.memoryIn(t, experimental.WithMemoryAllocator(context.Background(), experimental.MemoryAllocatorFunc(
		func(capHint, maxBytes uint64) experimental.LinearMemory { return &dirtyMemory{written: written} })), wasm)
}

// dirtyMemory is a linear memory that is 0xa5 over the spans of written
// and zero elsewhere when it is first sized.
type dirtyMemory struct {
	buf     []byte
	written []Span
}

func (m *dirtyMemory) Reallocate(size uint64) []byte {
	if m.buf == nil {
		m.buf = make([]byte, size)
		for _, s := range m.written {
			for i := s.At; i < min(s.End, size); i++ {
				m.buf[i] = 0xa5
			}
		}
		return m.buf
	}
	m.buf = append(m.buf, make([]byte, size-uint64(len(m.buf)))...)
	return m.buf
}

func (m *dirtyMemory) Free() {}

// dataSegments counts a module's data segments.
func dataSegments(t testing.TB, wasm []byte) int {
	top := &wreader{b: wasm, off: 8}
	for top.off < len(top.b) {
		id, _ := top.byte()
		size, err := top.u32()
		if err != nil {
			t.Fatal(err)
		}
		if id == 11 {
			n, _ := (&wreader{b: wasm[top.off : top.off+int(size)]}).u32()
			return int(n)
		}
		top.off += int(size)
	}
	return 0
}

// TestCoalesceDataSameMemory: for every tool module in the repository and
// the test fixtures, an instance of the coalesced module starts with
// memory byte for byte that of the original, and a Go module keeps a
// handful of its tens of thousands of data segments.
func TestCoalesceDataSameMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("builds every tool module")
	}
	root := testwasm.Root(t)
	paths := map[string]string{}
	goDirs, _ := filepath.Glob(filepath.Join(root, "tools-src", "*", "main.go"))
	for _, m := range goDirs {
		name := filepath.Base(filepath.Dir(m))
		paths[name] = testwasm.Go(t, "./tools-src/"+name)
	}
	for _, p := range []string{"misbehave", "minimal", "sdkcount", "egress"} {
		paths[p] = testwasm.Go(t, "./host/testdata/"+p)
	}
	paths["wordfreq"] = testwasm.C(t, "tools-src-c/wordfreq")
	wats, _ := filepath.Glob(filepath.Join(root, "host", "testdata", "wat", "*.wat"))
	for _, w := range wats {
		rel, _ := filepath.Rel(root, w)
		paths[filepath.Base(w)] = testwasm.WAT(t, filepath.ToSlash(rel))
	}
	d := newDataRuntime(t)
	for name, path := range paths {
		t.Run(name, func(t *testing.T) {
			orig, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			checked, err := Check(orig)
			if err != nil {
				t.Skipf("refused by the pre-check: %v", err)
			}
			got := CoalesceData(checked)
			before, after := dataSegments(t, checked), dataSegments(t, got)
			t.Logf("%d data segments -> %d", before, after)
			if before > 10000 && after > 20 {
				t.Errorf("a Go module kept %d of its %d data segments", after, before)
			}
			want, werr := d.memory(t, checked)
			have, herr := d.memory(t, got)
			if werr != nil && !strings.HasSuffix(name, ".wat") {
				t.Fatalf("instantiating the original: %v", werr) // a tool module must: else this compares nothing
			}
			if (werr == nil) != (herr == nil) {
				t.Fatalf("instantiating: original %v, coalesced %v", werr, herr)
			}
			if !bytes.Equal(want, have) {
				t.Fatalf("memory differs after instantiation (%d vs %d bytes)", len(want), len(have))
			}
			// What DataWrites says instantiation writes, it writes: a
			// buffer left dirty there starts as a zeroed one.
			written := DataWrites(got)
			var n uint64
			for _, s := range written {
				n += s.End - s.At
			}
			t.Logf("data writes %d bytes in %d spans", n, len(written))
			if before > 10000 && n < 1<<20 {
				t.Errorf("a Go module's data segments write %d bytes, by DataWrites", n)
			}
			if werr == nil && written != nil {
				over, err := d.memoryOver(t, got, written)
				if err != nil {
					t.Fatalf("instantiating over a dirty buffer: %v", err)
				}
				if i := firstDiff(want, over); i >= 0 {
					t.Fatalf("over a buffer dirty where DataWrites says, byte %d is %#x after instantiation, want %#x", i, over[i], want[i])
				}
			}
		})
	}
}

// testData is a module with one memory of pages pages and the given data
// segments (each: flags, offset, bytes), plus any extra sections.
func testData(pages byte, segs []segment, extra ...[]byte) []byte {
	b := []byte("\x00asm\x01\x00\x00\x00")
	b = append(b, 5, 3, 1, 0, pages) // memory section: one memory, min pages
	var body []byte
	body = leb(body, uint32(len(segs)))
	for _, s := range segs {
		body = append(body, 0, 0x41)
		body = sleb32(body, int32(s.at))
		body = append(body, 0x0b)
		body = leb(body, uint32(len(s.bytes)))
		body = append(body, s.bytes...)
	}
	b = append(b, 11)
	b = leb(b, uint32(len(body)))
	b = append(b, body...)
	for _, e := range extra {
		b = append(b, e...)
	}
	return b
}

// TestCoalesceDataRandom: on modules of random segments (adjacent, with
// gaps of every size, overlapping, out of order, empty, out of bounds),
// the coalesced module instantiates to the same memory, or fails as the
// original does.
func TestCoalesceDataRandom(t *testing.T) {
	d := newDataRuntime(t)
	rng := rand.New(rand.NewPCG(7, 12))
	const pages = 1
	for i := range 300 {
		var segs []segment
		at := rng.IntN(200)
		for range 1 + rng.IntN(30) {
			switch rng.IntN(10) {
			case 0: // backwards, maybe overlapping what came before
				at = rng.IntN(at + 1)
			case 1: // a wide gap
				at += MaxDataGap - 8 + rng.IntN(16)
			default:
				at += rng.IntN(40)
			}
			n := rng.IntN(50)
			if rng.IntN(10) == 0 {
				n = 0
			}
			data := make([]byte, n)
			for j := range data {
				data[j] = byte(1 + rng.IntN(255))
			}
			if rng.IntN(300) == 0 {
				at = pages*65536 - rng.IntN(20) // may run past the end
			}
			segs = append(segs, segment{at: uint32(at), bytes: data})
			at += n
		}
		orig := testData(pages, segs)
		got := CoalesceData(orig)
		want, werr := d.memory(t, orig)
		have, herr := d.memory(t, got)
		if (werr == nil) != (herr == nil) || !bytes.Equal(want, have) {
			t.Fatalf("module %d (%d segments -> %d): memory or error differs: %v / %v",
				i, len(segs), dataSegments(t, got), werr, herr)
		}
		if werr != nil {
			continue
		}
		for _, m := range [][]byte{orig, got} {
			over, err := d.memoryOver(t, m, DataWrites(m))
			if err != nil {
				t.Fatalf("module %d over a dirty buffer: %v", i, err)
			}
			if at := firstDiff(want, over); at >= 0 {
				t.Fatalf("module %d (%d segments): over a buffer dirty where DataWrites says, byte %d is %#x, want %#x", i, len(segs), at, over[at], want[at])
			}
		}
	}
}

// TestCoalesceDataLeavesAlone: modules whose segments' indices or results
// are not known here are returned unchanged.
func TestCoalesceDataLeavesAlone(t *testing.T) {
	two := []segment{{at: 0, bytes: []byte{1}}, {at: 1, bytes: []byte{2}}}
	joined := CoalesceData(testData(1, two))
	if n := dataSegments(t, joined); n != 1 {
		t.Fatalf("control: two adjacent segments became %d", n)
	}
	passive := []byte("\x00asm\x01\x00\x00\x00\x05\x03\x01\x00\x01\x0b\x0a\x02\x01\x01\x09\x00\x41\x00\x0b\x01\x02")                                              // one passive, one active
	global := []byte("\x00asm\x01\x00\x00\x00\x02\x08\x01\x01m\x01g\x03\x7f\x00\x05\x03\x01\x00\x01\x0b\x0d\x02\x00\x23\x00\x0b\x01\x01\x00\x41\x01\x0b\x01\x02") // offset from an imported global
	dataCount := testData(1, two)
	dataCount = append(dataCount[:13:13], append([]byte{12, 1, 2}, dataCount[13:]...)...) // before the data section
	imported := []byte("\x00asm\x01\x00\x00\x00\x02\x0a\x01\x01m\x03mem\x02\x00\x01\x0b\x0d\x02\x00\x41\x00\x0b\x01\x01\x00\x41\x01\x0b\x01\x02")
	d := newDataRuntime(t)
	for name, wasm := range map[string][]byte{"passive": passive, "global offset": global, "data count": dataCount, "imported memory": imported} {
		if _, err := d.rt.CompileModule(context.Background(), wasm); err != nil {
			t.Fatalf("%s: the test module is not valid: %v", name, err)
		}
		if w := DataWrites(wasm); (w == nil) != (name != "data count") {
			t.Errorf("%s: DataWrites = %v", name, w)
		}
		if got := CoalesceData(wasm); !bytes.Equal(got, wasm) {
			t.Errorf("%s: rewritten", name)
		}
	}
}

// firstDiff is the first index at which a and b differ (a length too), or
// -1.
func firstDiff(a, b []byte) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	if len(a) != len(b) {
		return min(len(a), len(b))
	}
	return -1
}
