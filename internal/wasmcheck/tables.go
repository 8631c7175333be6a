package wasmcheck

import "fmt"

// tableSection is a module's table section as Check read it, so that
// apply can rewrite the tables' limits.
type tableSection struct {
	head, end int    // the whole section (id byte to last byte) in the module
	body      []byte // the section's content
	tables    []tableType
	entries   uint64 // all tables' entries at their maximum, once apply has run
}

// tableType is one table's limits and where their bytes are in the body.
type tableType struct {
	lim     limits
	at, end int
}

func readTables(r *wreader) (*tableSection, error) {
	t := &tableSection{body: r.b}
	err := r.each("tables", func(r *wreader) error {
		tt, err := readTable(r)
		t.tables = append(t.tables, tt)
		return err
	})
	return t, err
}

// readTable reads a table type: an optional initialiser marker (0x40 0x00),
// a reference type, limits, and the initialiser if marked.
func readTable(r *wreader) (tableType, error) {
	var tt tableType
	b, err := r.byte()
	if err != nil {
		return tt, err
	}
	withInit := b == 0x40
	if withInit {
		if _, err := r.byte(); err != nil {
			return tt, err
		}
	} else {
		r.off--
	}
	if err := r.valtype(); err != nil {
		return tt, err
	}
	tt.at = r.off
	if tt.lim, err = r.limits(); err != nil {
		return tt, err
	}
	tt.end = r.off
	if withInit {
		err = r.constExpr()
	}
	return tt, err
}

// apply refuses tables whose minimum sizes add up to more than
// MaxTableEntries and gives every table a maximum such that all of them
// together stay within it: a table's declared maximum is kept while the
// budget lasts (tables in order), and a table without one cannot grow.
// It returns wasm unchanged when no limit needs writing.
func (t *tableSection) apply(wasm []byte) ([]byte, error) {
	var total uint64
	for _, tt := range t.tables {
		total += uint64(tt.lim.min)
	}
	if total > MaxTableEntries {
		return nil, fmt.Errorf("table section: its tables have %d entries at start, over the host's limit of %d (8 bytes of host memory each)",
			total, MaxTableEntries)
	}
	budget := MaxTableEntries - total
	body := make([]byte, 0, len(t.body)+10*len(t.tables))
	prev, changed := 0, false
	for _, tt := range t.tables {
		if tt.lim.hasMax && tt.lim.max < tt.lim.min {
			continue // invalid: wazero refuses it
		}
		growth := uint64(0)
		if tt.lim.hasMax {
			growth = min(uint64(tt.lim.max-tt.lim.min), budget)
		}
		budget -= growth
		max := tt.lim.min + uint32(growth)
		if tt.lim.hasMax && tt.lim.max == max {
			continue
		}
		body = append(body, t.body[prev:tt.at]...)
		body = append(body, tt.lim.flag|1)
		body = leb(body, tt.lim.min)
		body = leb(body, max)
		prev, changed = tt.end, true
	}
	t.entries = MaxTableEntries - budget // the minima and the growth allowed
	if !changed {
		return wasm, nil
	}
	body = append(body, t.body[prev:]...)
	out := make([]byte, 0, len(wasm)+len(body)-len(t.body)+5)
	out = append(out, wasm[:t.head]...)
	out = append(out, 4)
	out = leb(out, uint32(len(body)))
	out = append(out, body...)
	return append(out, wasm[t.end:]...), nil
}
