package wasmcheck

import "math"

// wreader reads one section (or one function body) of a module binary for
// Check. Every read is bounded by b; running past its end is an error.
type wreader struct {
	b   []byte
	off int
}

func (r *wreader) left() int { return len(r.b) - r.off }

func (r *wreader) byte() (byte, error) {
	if r.off >= len(r.b) {
		return 0, bad("unexpected end")
	}
	r.off++
	return r.b[r.off-1], nil
}

func (r *wreader) skip(n uint32) error {
	if uint64(n) > uint64(r.left()) {
		return bad("unexpected end")
	}
	r.off += int(n)
	return nil
}

// u32 reads an unsigned LEB128 number of at most 32 bits.
func (r *wreader) u32() (uint32, error) {
	var v uint64
	for shift := 0; shift < 35; shift += 7 {
		b, err := r.byte()
		if err != nil {
			return 0, err
		}
		v |= uint64(b&0x7f) << shift
		if b&0x80 == 0 {
			if v > math.MaxUint32 {
				return 0, bad("a number overflows 32 bits")
			}
			return uint32(v), nil
		}
	}
	return 0, bad("a number overflows 32 bits")
}

// sleb skips a signed LEB128 number of at most bits bits.
func (r *wreader) sleb(bits int) error {
	for n := 0; n < (bits+6)/7; n++ {
		b, err := r.byte()
		if err != nil {
			return err
		}
		if b&0x80 == 0 {
			return nil
		}
	}
	return bad("a number overflows %d bits", bits)
}

// count reads a vector's length and checks that the bytes left can hold
// that many elements (each takes at least one): wazero allocates the
// vector before it reads the elements.
func (r *wreader) count(what string) (uint32, error) {
	n, err := r.u32()
	if err != nil {
		return 0, err
	}
	if uint64(n) > uint64(r.left()) {
		return 0, bad("declares %d %s in %d bytes", n, what, r.left())
	}
	return n, nil
}

// each reads a counted vector, calling f for each element.
func (r *wreader) each(what string, f func(*wreader) error) error {
	n, err := r.count(what)
	if err != nil {
		return err
	}
	for range n {
		if err := f(r); err != nil {
			return err
		}
	}
	return nil
}

// vec skips a byte vector (a name, a data segment's bytes).
func (r *wreader) vec(what string) error {
	n, err := r.count(what + " bytes")
	if err != nil {
		return err
	}
	return r.skip(n)
}

// str reads a byte vector as a string.
func (r *wreader) str() (string, error) {
	n, err := r.count("name bytes")
	if err != nil {
		return "", err
	}
	s := string(r.b[r.off : r.off+int(n)])
	r.off += int(n)
	return s, nil
}

// indexName skips an index and a name, one entry of a name map.
func (r *wreader) indexName() error {
	if _, err := r.u32(); err != nil {
		return err
	}
	return r.vec("name")
}

// valtype skips a value type: one byte, or a reference type prefix and
// its heap type.
func (r *wreader) valtype() error {
	b, err := r.byte()
	if err != nil {
		return err
	}
	if b == 0x63 || b == 0x64 {
		return r.sleb(33)
	}
	return nil
}

// limits reads a table's or memory's limits.
type limits struct {
	flag     byte
	min, max uint32
	hasMax   bool
}

func (r *wreader) limits() (limits, error) {
	var l limits
	var err error
	if l.flag, err = r.byte(); err != nil {
		return l, err
	}
	if l.flag > 3 {
		return l, bad("limits flag %#x", l.flag)
	}
	if l.min, err = r.u32(); err != nil {
		return l, err
	}
	if l.hasMax = l.flag&1 != 0; l.hasMax {
		l.max, err = r.u32()
	}
	return l, err
}

// constExpr skips a constant expression, with the instructions wazero
// accepts in one.
func (r *wreader) constExpr() error {
	for {
		op, err := r.byte()
		if err != nil {
			return err
		}
		switch op {
		case 0x0b: // end
			return nil
		case 0x41: // i32.const
			err = r.sleb(32)
		case 0x42: // i64.const
			err = r.sleb(64)
		case 0x43: // f32.const
			err = r.skip(4)
		case 0x44: // f64.const
			err = r.skip(8)
		case 0x23, 0xd2: // global.get, ref.func
			_, err = r.u32()
		case 0xd0: // ref.null: a reference type byte, or a type index
			var t byte
			if t, err = r.byte(); err == nil && t != 0x70 && t != 0x6f && t != 0x69 {
				r.off--
				_, err = r.u32()
			}
		case 0xfd: // v128.const
			var sub byte
			if sub, err = r.byte(); err == nil && sub != 0x0c {
				err = bad("vector opcode %#x in a constant expression", sub)
			}
			if err == nil {
				err = r.skip(16)
			}
		case 0x6a, 0x6b, 0x6c, 0x7c, 0x7d, 0x7e: // extended-const arithmetic
		default:
			return bad("opcode %#x in a constant expression", op)
		}
		if err != nil {
			return err
		}
	}
}

// leb appends v as unsigned LEB128.
func leb(b []byte, v uint32) []byte {
	for {
		c := byte(v & 0x7f)
		if v >>= 7; v != 0 {
			b = append(b, c|0x80)
			continue
		}
		return append(b, c)
	}
}
