package reliability_test

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// module describes a hand-rolled ABI v1 module that the tests generate as
// WAT and assemble with wat2wasm. Generating keeps multi-megabyte fixtures
// (a 5 MB schema, 10,000 tools) out of the repository.
//
// Memory layout: the manifest at manifestAt, the response right after it
// (8-byte aligned), and a bump heap after both for toolhost_alloc.
type module struct {
	// Pages is the initial memory size in 64 KiB pages; 0 means just
	// enough for the data plus one page of heap.
	Pages int
	// Manifest is what toolhost_describe returns.
	Manifest []byte
	// Response is what toolhost_call returns unless Call is set.
	Response []byte
	// Imports are extra WAT import lines.
	Imports string
	// Describe and Call replace the bodies of toolhost_describe and
	// toolhost_call (which must leave one i64 on the stack).
	Describe, Call string
	// Funcs are extra WAT function definitions.
	Funcs string
	// Data are extra data segments: offset -> bytes.
	Data map[int][]byte
}

const manifestAt = 16

// wat renders the module as WAT text.
func (m module) wat() string {
	respAt := align8(manifestAt + len(m.Manifest))
	heap := align8(respAt + len(m.Response))
	for off, b := range m.Data {
		heap = max(heap, align8(off+len(b)))
	}
	pages := m.Pages
	if pages == 0 {
		pages = heap/65536 + 2
	}
	describe := m.Describe
	if describe == "" {
		describe = fmt.Sprintf("(i64.const %d)", pack(manifestAt, len(m.Manifest)))
	}
	call := m.Call
	if call == "" {
		call = fmt.Sprintf("(i64.const %d)", pack(respAt, len(m.Response)))
	}
	var b strings.Builder
	b.WriteString("(module\n")
	b.WriteString(m.Imports)
	fmt.Fprintf(&b, "  (memory (export \"memory\") %d)\n", pages)
	writeData(&b, manifestAt, m.Manifest)
	writeData(&b, respAt, m.Response)
	for off, d := range m.Data {
		writeData(&b, off, d)
	}
	fmt.Fprintf(&b, "  (global $heap (mut i32) (i32.const %d))\n", heap)
	b.WriteString(`  (func (export "toolhost_abi_version") (result i32) (i32.const 1))
  (func (export "toolhost_alloc") (param $size i32) (result i32)
    (global.get $heap)
    (global.set $heap (i32.add (global.get $heap) (local.get $size))))
`)
	fmt.Fprintf(&b, "  (func (export \"toolhost_describe\") (result i64)\n    %s)\n", describe)
	fmt.Fprintf(&b, "  (func (export \"toolhost_call\") (param i32 i32 i32 i32) (result i64)\n    %s)\n", call)
	b.WriteString(m.Funcs)
	b.WriteString(")\n")
	return b.String()
}

func align8(n int) int { return (n + 7) &^ 7 }

// pack is abi.Pack for int operands, as the int64 a WAT i64.const takes.
func pack(ptr, n int) int64 { return int64(uint64(uint32(ptr))<<32 | uint64(uint32(n))) }

// writeData writes a data segment, escaping every byte that is not
// printable ASCII (and the quote and backslash) as \hh.
func writeData(b *strings.Builder, off int, data []byte) {
	if len(data) == 0 {
		return
	}
	fmt.Fprintf(b, "  (data (i32.const %d) \"", off)
	const hex = "0123456789abcdef"
	for _, c := range data {
		if c >= 0x20 && c < 0x7f && c != '"' && c != '\\' {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('\\')
		b.WriteByte(hex[c>>4])
		b.WriteByte(hex[c&15])
	}
	b.WriteString("\")\n")
}

// assemble writes text to NAME.wat in a temporary folder and assembles it
// with wat2wasm into NAME.wasm, whose path it returns.
func assemble(t testing.TB, name, text string) string {
	t.Helper()
	tool, err := exec.LookPath("wat2wasm")
	if err != nil {
		t.Fatal("wat2wasm not found: install wabt (apt-get install wabt)")
	}
	dir := t.TempDir()
	src := filepath.Join(dir, name+".wat")
	if err := os.WriteFile(src, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, name+".wasm")
	if b, err := exec.Command(tool, "-o", out, src).CombinedOutput(); err != nil {
		t.Fatalf("wat2wasm %s: %v\n%s", name, err, b)
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

func itoa(v int64) string { return strconv.FormatInt(v, 10) }
