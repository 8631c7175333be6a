package wasmcheck

import (
	"slices"
	"sort"
)

// Span is a range of linear memory: the bytes from At up to End.
type Span struct{ At, End uint64 }

// DataWrites returns the bytes of memory that instantiating wasm writes
// from its data segments before any of its code runs: sorted, disjoint,
// adjacent or overlapping segments joined. It returns nil when the module
// has no data, imports its memory (the bytes are someone else's), has a
// segment that is passive or placed by anything but an i32.const, or
// cannot be read here.
//
// A memory pool uses it to leave those bytes of a reused buffer as they
// are: the instantiation overwrites them anyway, and for a Go module they
// are about half of what a fresh instance's memory reaches.
func DataWrites(wasm []byte) []Span {
	d, ok := findData(wasm)
	if !ok || d.body == nil {
		return nil
	}
	segs, ok := readActiveData(d.body)
	if !ok {
		return nil
	}
	spans := make([]Span, 0, len(segs))
	for _, s := range segs {
		if len(s.bytes) > 0 {
			spans = append(spans, Span{uint64(s.at), s.end()})
		}
	}
	// sort.Slice rather than slices.SortFunc: a new instantiation of the
	// generic sort would cost the server binary about 15 KB.
	sort.Slice(spans, func(i, j int) bool { return spans[i].At < spans[j].At })
	out := spans[:0]
	for _, s := range spans {
		if n := len(out); n > 0 && s.At <= out[n-1].End {
			out[n-1].End = max(out[n-1].End, s.End)
			continue
		}
		out = append(out, s)
	}
	if len(out) == 0 {
		return nil
	}
	return slices.Clip(out)
}
