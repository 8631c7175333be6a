package wasmcheck

// MaxDataGap is the widest run of zero bytes CoalesceData fills in to join
// two data segments: wide enough for the alignment padding between Go's
// symbols (a few to a few hundred bytes), narrow enough that a module's
// compiled form does not hold large runs of zeros.
const MaxDataGap = 4096

// CoalesceData returns wasm with its active data segments joined into as
// few as it can, or wasm itself when it cannot or need not. The caller
// keeps the original's identity (its sha256, in names, cache keys and
// events) for the result.
//
// Go's linker emits one data segment per symbol, about 40,000 per module,
// and wazero evaluates each one's offset and copies it into memory
// separately at every instantiation: a fifth of a fresh Go instance's cost.
// Joining segments that follow each other in memory (with the zeros of
// any gap of at most MaxDataGap written out) leaves a handful, and the
// memory every instance starts with byte for byte the same:
//
//   - only when every segment is active in memory 0 at an i32.const
//     offset, so the result of each is known here;
//   - only when there is no data count section, which any module whose code
//     names a data segment (memory.init, data.drop) must have: nothing else
//     refers to a segment's index;
//   - only when memory is not imported, so it starts zeroed;
//   - a segment joins the one before it only when it starts at or after
//     that one's end (segments apply in order, and a later one overwrites);
//     a gap is filled only when no earlier segment wrote into it;
//   - a joined segment is in bounds exactly when all its parts were, so
//     instantiation fails for the same modules.
//
// Run it after Check, on a module whose structure Check has read;
// anything unexpected leaves the module as it is.
func CoalesceData(wasm []byte) []byte {
	d, ok := findData(wasm)
	if !ok || d.body == nil || d.counted {
		return wasm
	}
	segs, ok := readActiveData(d.body)
	if !ok {
		return wasm
	}
	dataHead, dataEnd := d.head, d.end
	runs := joinSegments(segs)
	if len(runs) == len(segs) {
		return wasm
	}
	body := leb(nil, uint32(len(runs)))
	for _, r := range runs {
		body = append(body, 0x00, 0x41) // active in memory 0, i32.const
		body = sleb32(body, int32(r.at))
		body = append(body, 0x0b)
		body = leb(body, uint32(len(r.bytes)))
		body = append(body, r.bytes...)
	}
	out := make([]byte, 0, len(wasm)-(dataEnd-dataHead)+len(body)+6)
	out = append(out, wasm[:dataHead]...)
	out = append(out, 11)
	out = leb(out, uint32(len(body)))
	out = append(out, body...)
	return append(out, wasm[dataEnd:]...)
}

// dataSection is where a module's data section is, as findData found it.
type dataSection struct {
	head, end int      // the section's bytes in the module, its id included
	body      *wreader // its contents; nil: the module has none
	counted   bool     // the module has a data count section
}

// findData finds the data section of a module whose memory is its own;
// false for a module that imports its memory or whose sections it cannot
// walk.
func findData(wasm []byte) (dataSection, bool) {
	d := dataSection{head: -1, end: -1}
	if len(wasm) < 8 {
		return d, false
	}
	top := &wreader{b: wasm, off: 8}
	for top.off < len(top.b) {
		head := top.off
		id, _ := top.byte()
		size, err := top.u32()
		if err != nil || top.skip(size) != nil {
			return d, false
		}
		body := &wreader{b: wasm[top.off-int(size) : top.off]}
		switch id {
		case 2:
			if imported, err := importsMemory(body); err != nil || imported {
				return d, false
			}
		case 11:
			d.head, d.end, d.body = head, top.off, body
		case 12:
			d.counted = true
		}
	}
	return d, true
}

// segment is an active data segment: its bytes go to memory at at.
type segment struct {
	at    uint32
	bytes []byte
}

func (s segment) end() uint64 { return uint64(s.at) + uint64(len(s.bytes)) }

// readActiveData reads a data section whose segments are all active in
// memory 0 at a non-negative i32.const offset; false for any other.
func readActiveData(r *wreader) ([]segment, bool) {
	n, err := r.count("data segments")
	if err != nil {
		return nil, false
	}
	segs := make([]segment, 0, n)
	for range n {
		flags, err := r.u32()
		if err != nil {
			return nil, false
		}
		switch flags {
		case 0:
		case 2:
			if mem, err := r.u32(); err != nil || mem != 0 {
				return nil, false
			}
		default:
			return nil, false
		}
		if op, err := r.byte(); err != nil || op != 0x41 {
			return nil, false
		}
		at, err := r.s32()
		if err != nil || at < 0 {
			return nil, false
		}
		if op, err := r.byte(); err != nil || op != 0x0b {
			return nil, false
		}
		size, err := r.count("data segment bytes")
		if err != nil {
			return nil, false
		}
		segs = append(segs, segment{at: uint32(at), bytes: r.b[r.off : r.off+int(size)]})
		r.off += int(size)
	}
	return segs, r.left() == 0
}

// joinSegments joins consecutive segments as CoalesceData describes. The
// result is in the original order, so later bytes still overwrite earlier
// ones.
func joinSegments(segs []segment) []segment {
	type run struct {
		at, end uint64
		parts   []segment
	}
	var runs []*run
	// clear says no run before the current one wrote between from and to.
	clear := func(from, to uint64) bool {
		for _, r := range runs[:len(runs)-1] {
			if r.at < to && from < r.end {
				return false
			}
		}
		return true
	}
	for _, s := range segs {
		if n := len(runs); n > 0 {
			cur := runs[n-1]
			at := uint64(s.at)
			if at >= cur.end && at-cur.end <= MaxDataGap && (at == cur.end || clear(cur.end, at)) {
				cur.parts = append(cur.parts, s)
				cur.end = s.end()
				continue
			}
		}
		runs = append(runs, &run{at: uint64(s.at), end: s.end(), parts: []segment{s}})
	}
	out := make([]segment, len(runs))
	for i, r := range runs {
		if len(r.parts) == 1 {
			out[i] = r.parts[0]
			continue
		}
		b := make([]byte, r.end-r.at)
		for _, p := range r.parts {
			copy(b[uint64(p.at)-r.at:], p.bytes)
		}
		out[i] = segment{at: uint32(r.at), bytes: b}
	}
	return out
}

// importsMemory reads an import section and reports whether it imports a
// memory.
func importsMemory(r *wreader) (bool, error) {
	found := false
	err := r.each("imports", func(r *wreader) error {
		start := r.off
		if err := r.vec("import module"); err != nil {
			return err
		}
		if err := r.vec("import name"); err != nil {
			return err
		}
		kind, err := r.byte()
		if err != nil {
			return err
		}
		found = found || kind == 2
		r.off = start
		return checkImport(r) // the whole import, to the next one
	})
	return found, err
}

// s32 reads a signed LEB128 number of at most 32 bits.
func (r *wreader) s32() (int32, error) {
	var v int64
	for shift := 0; shift < 35; shift += 7 {
		b, err := r.byte()
		if err != nil {
			return 0, err
		}
		v |= int64(b&0x7f) << shift
		if b&0x80 == 0 {
			if shift+7 < 64 && b&0x40 != 0 {
				v -= int64(1) << (shift + 7)
			}
			if v < -1<<31 || v > 1<<31-1 {
				return 0, bad("a number overflows 32 bits")
			}
			return int32(v), nil
		}
	}
	return 0, bad("a number overflows 32 bits")
}

// sleb32 appends v as signed LEB128.
func sleb32(b []byte, v int32) []byte {
	for {
		c := byte(v & 0x7f)
		v >>= 7
		if v == 0 && c&0x40 == 0 || v == -1 && c&0x40 != 0 {
			return append(b, c)
		}
		b = append(b, c|0x80)
	}
}
