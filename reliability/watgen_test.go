package reliability_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// module describes a hand-rolled ABI v1 module that the tests generate
// and encode as WebAssembly binary themselves. Generating keeps
// multi-megabyte fixtures (a 5 MB schema, 10,000 tools) out of the
// repository, and encoding in Go keeps `make test` free of wabt.
//
// Memory layout: the manifest at manifestAt, the response right after it
// (8-byte aligned), and a bump heap after both for toolhost_alloc.
type module struct {
	// Pages is the initial memory size in 64 KiB pages; 0 means just
	// enough for the data plus one page of heap.
	Pages int
	// Manifest is what toolhost_describe returns.
	Manifest []byte
	// Response is what toolhost_call returns unless Result is set.
	Response []byte
	// ImportFuncs are extra imported functions of type () -> ().
	ImportFuncs []importFunc
	// Tables are funcref tables, by their initial number of entries
	// (without a maximum).
	Tables []uint32
	// GrowTable, when set, makes toolhost_call first grow table 0 by
	// that many entries and trap unless the growth was refused (-1).
	GrowTable uint32
	// Result, when set, is the packed (ptr, len) toolhost_call returns
	// instead of the response's.
	Result int64
	// Data are extra data segments: offset -> bytes.
	Data map[int][]byte
}

type importFunc struct{ Module, Name string }

const manifestAt = 16

// Value types, opcodes and section ids of the binary format
// (https://webassembly.github.io/spec/core/binary/).
const (
	typeI32, typeI64, typeFuncref = 0x7f, 0x7e, 0x70

	opUnreachable, opIf, opEnd           = 0x00, 0x04, 0x0b
	opLocalGet, opGlobalGet, opGlobalSet = 0x20, 0x23, 0x24
	opI32Const, opI64Const               = 0x41, 0x42
	opI32Ne, opI32Add                    = 0x47, 0x6a
	opRefNull, opPrefixFC, fcTableGrow   = 0xd0, 0xfc, 0x0f

	secType, secImport, secFunc, secTable, secMemory = 1, 2, 3, 4, 5
	secGlobal, secExport, secCode, secData           = 6, 7, 10, 11
)

// wasm encodes the module.
func (m module) wasm() []byte {
	respAt := align8(manifestAt + len(m.Manifest))
	heap := align8(respAt + len(m.Response))
	for off, b := range m.Data {
		heap = max(heap, align8(off+len(b)))
	}
	pages := m.Pages
	if pages == 0 {
		pages = heap/65536 + 2
	}
	result := m.Result
	if result == 0 {
		result = pack(respAt, len(m.Response))
	}
	out := []byte("\x00asm\x01\x00\x00\x00")
	// Types: 0 () -> i32, 1 (i32) -> i32, 2 () -> i64,
	// 3 (i32 i32 i32 i32) -> i64, 4 () -> ().
	out = section(out, secType, vec(5,
		[]byte{0x60, 0, 1, typeI32},
		[]byte{0x60, 1, typeI32, 1, typeI32},
		[]byte{0x60, 0, 1, typeI64},
		[]byte{0x60, 4, typeI32, typeI32, typeI32, typeI32, 1, typeI64},
		[]byte{0x60, 0, 0}))
	if len(m.ImportFuncs) > 0 {
		var imps [][]byte
		for _, f := range m.ImportFuncs {
			imps = append(imps, append(append(name(f.Module), name(f.Name)...), 0x00, 4))
		}
		out = section(out, secImport, vec(len(imps), imps...))
	}
	out = section(out, secFunc, vec(4, []byte{0}, []byte{1}, []byte{2}, []byte{3}))
	if len(m.Tables) > 0 {
		var tabs [][]byte
		for _, n := range m.Tables {
			tabs = append(tabs, uleb([]byte{typeFuncref, 0x00}, uint64(n)))
		}
		out = section(out, secTable, vec(len(tabs), tabs...))
	}
	out = section(out, secMemory, vec(1, uleb([]byte{0x00}, uint64(pages))))
	out = section(out, secGlobal, vec(1, append(sleb([]byte{typeI32, 1, opI32Const}, int64(heap)), opEnd)))
	fn := len(m.ImportFuncs) // index of the first defined function
	out = section(out, secExport, vec(5,
		append(name("memory"), 0x02, 0),
		uleb(append(name("toolhost_abi_version"), 0x00), uint64(fn)),
		uleb(append(name("toolhost_alloc"), 0x00), uint64(fn+1)),
		uleb(append(name("toolhost_describe"), 0x00), uint64(fn+2)),
		uleb(append(name("toolhost_call"), 0x00), uint64(fn+3))))
	var call []byte
	if m.GrowTable > 0 {
		call = []byte{opRefNull, typeFuncref}
		call = sleb(append(call, opI32Const), int64(int32(m.GrowTable)))
		call = append(call, opPrefixFC, fcTableGrow, 0, opI32Const, 0x7f, opI32Ne, opIf, 0x40, opUnreachable, opEnd)
	}
	out = section(out, secCode, vec(4,
		body([]byte{opI32Const, 1}),
		body([]byte{opGlobalGet, 0, opGlobalGet, 0, opLocalGet, 0, opI32Add, opGlobalSet, 0}),
		body(sleb([]byte{opI64Const}, pack(manifestAt, len(m.Manifest)))),
		body(sleb(append(call, opI64Const), result))))
	var segs [][]byte
	for _, s := range []struct {
		off  int
		data []byte
	}{{manifestAt, m.Manifest}, {respAt, m.Response}} {
		if len(s.data) > 0 {
			segs = append(segs, dataSeg(s.off, s.data))
		}
	}
	for off, d := range m.Data {
		segs = append(segs, dataSeg(off, d))
	}
	return section(out, secData, vec(len(segs), segs...))
}

func section(out []byte, id byte, content []byte) []byte {
	out = uleb(append(out, id), uint64(len(content)))
	return append(out, content...)
}

func vec(n int, items ...[]byte) []byte {
	out := uleb(nil, uint64(n))
	for _, it := range items {
		out = append(out, it...)
	}
	return out
}

func name(s string) []byte { return append(uleb(nil, uint64(len(s))), s...) }

// body is a function body without locals.
func body(code []byte) []byte {
	b := append([]byte{0}, code...)
	b = append(b, opEnd)
	return append(uleb(nil, uint64(len(b))), b...)
}

// dataSeg is an active segment for memory 0 at off.
func dataSeg(off int, data []byte) []byte {
	b := sleb([]byte{0x00, opI32Const}, int64(int32(uint32(off))))
	b = uleb(append(b, opEnd), uint64(len(data)))
	return append(b, data...)
}

func uleb(out []byte, v uint64) []byte {
	for {
		c := byte(v & 0x7f)
		if v >>= 7; v != 0 {
			out = append(out, c|0x80)
			continue
		}
		return append(out, c)
	}
}

func sleb(out []byte, v int64) []byte {
	for {
		c := byte(v & 0x7f)
		v >>= 7
		if (v == 0 && c&0x40 == 0) || (v == -1 && c&0x40 != 0) {
			return append(out, c)
		}
		out = append(out, c|0x80)
	}
}

func align8(n int) int { return (n + 7) &^ 7 }

// pack is abi.Pack for int operands.
func pack(ptr, n int) int64 { return int64(uint64(uint32(ptr))<<32 | uint64(uint32(n))) }

// assemble encodes m into NAME.wasm in a temporary folder and returns its
// path.
func assemble(t testing.TB, name string, m module) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), name+".wasm")
	if err := os.WriteFile(out, m.wasm(), 0o644); err != nil {
		t.Fatal(err)
	}
	return out
}

// manifest is a one-tool manifest for name with an object schema. The
// name is JSON-encoded, so any string (odd characters included) reaches
// the host exactly.
func manifest(name string) []byte {
	n, _ := json.Marshal(name)
	return fmt.Appendf(nil, `{"abi":1,"tools":[{"name":%s,"input_schema":{"type":"object"}}]}`, n)
}
