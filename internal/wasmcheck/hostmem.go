package wasmcheck

import (
	"fmt"
	"strings"
)

// MaxHostBytes caps the host memory one instance of a module may need
// outside its linear memory (which Limits.MemoryBytes caps): tables,
// element segments, globals and data segments, which wazero allocates on
// the Go heap for every instance. Without it, a 4 MB module of passive
// element segments cost ~157 MiB of host heap per instance, and one of a
// million globals ~90 MiB, so 64 calls in flight reached ~10 GiB (issue 10
// finding 2). Go and C guests need well under 2 MiB (a Go guest: ~48,500
// data segments, a table and elements of a few thousand entries).
const MaxHostBytes = 16 << 20

// What each item costs per instance, in bytes of Go heap. Measured with
// wazero v1.12's compiler on linux/amd64: a module of N = 200,000 items of
// one kind (and nothing else of note), K = 4 instances of it, the heap
// after runtime.GC() before and after instantiating, divided by K×N:
// globals 88.1, element items 41.5 (passive, by index or expression;
// active ones with their table the same), element segments of one item
// 73.5 (so 32 for the segment), table entries 8.1, passive data segments
// 24.0 (their bytes stay in the compiled module; active ones' bytes are
// copied into linear memory, under its own cap). Functions cost nothing per
// instance. Rounded up.
const (
	hostBytesPerGlobal      = 88
	hostBytesPerElemItem    = 42
	hostBytesPerElemSegment = 32
	hostBytesPerTableEntry  = 8
	hostBytesPerDataSegment = 24
)

// hostCost counts what a module makes every instance allocate outside its
// linear memory.
type hostCost struct {
	globals, elemItems, elemSegments, tableEntries, dataSegments uint64
}

func (c hostCost) bytes() uint64 {
	return c.globals*hostBytesPerGlobal + c.elemItems*hostBytesPerElemItem +
		c.elemSegments*hostBytesPerElemSegment + c.tableEntries*hostBytesPerTableEntry +
		c.dataSegments*hostBytesPerDataSegment
}

// check refuses a module whose instances would need more than MaxHostBytes,
// naming what takes the memory.
func (c hostCost) check() error {
	total := c.bytes()
	if total <= MaxHostBytes {
		return nil
	}
	var parts []string
	for _, p := range []struct {
		n    uint64
		what string
		each int
	}{
		{c.globals, "globals", hostBytesPerGlobal},
		{c.elemItems, "element items", hostBytesPerElemItem},
		{c.elemSegments, "element segments", hostBytesPerElemSegment},
		{c.tableEntries, "table entries", hostBytesPerTableEntry},
		{c.dataSegments, "data segments", hostBytesPerDataSegment},
	} {
		if p.n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s × %d B", p.n, p.what, p.each))
		}
	}
	return &overLimit{fmt.Sprintf("each instance would need about %.1f MiB of host memory outside its linear memory (%s), over the host's limit of %d MiB",
		float64(total)/(1<<20), strings.Join(parts, ", "), MaxHostBytes>>20)}
}
