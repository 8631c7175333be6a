// Package wasmcheck reads an untrusted WebAssembly binary's structure
// before wazero decodes it (see Check), so that a few hostile bytes cannot
// make the decoder allocate without bound, and caps what every instance
// of the module would allocate on the host outside its linear memory. It
// knows the binary format, not wazero's API, tools or policy.
package wasmcheck

import (
	"errors"
	"fmt"
)

// Limits on a module's structure that wazero does not impose: checked, and
// for tables enforced, before a module is compiled.
const (
	// MaxTableEntries caps the entries of a module's tables, all tables
	// together, at start and after any table.grow: 1 Mi entries, 8 MiB of
	// host memory per instance. Go and C toolchains emit one fixed table
	// of a few thousand entries.
	MaxTableEntries = 1 << 20
	// MaxLocals caps the locals one function declares (the limit browsers
	// impose on WebAssembly).
	MaxLocals = 50000
)

// Check reads a module's binary structure before wazero decodes it,
// for two reasons.
//
// wazero's decoder sizes its slices from the counts a module declares, before
// reading the elements: a data section that declares 4,294,967,295
// segments in a 15-byte file makes it allocate 224 GB, and the Go runtime
// dies with "fatal error: out of memory", taking the host with it. So
// every count that sizes an allocation is checked against the bytes left to
// hold it (each element takes at least one), and the locals of a function
// (run-length encoded, so not bounded by bytes) against MaxLocals.
//
// Tables live in host memory outside the linear memory cap: one table of
// 2^27 entries is 1 GiB per instance, and table.grow on a table without a
// maximum grows it to 32 GiB. So tables are capped at MaxTableEntries in
// all, and each table's maximum is rewritten to fit that (a table without
// one gets its minimum: it cannot grow). The rewritten bytes are returned;
// the module's identity (its sha256) stays that of the original.
//
// The grammar is wazero's (WebAssembly 2.0 with its extensions), read only
// as deep as the counts and tables lie. Anything this does not recognise,
// wazero would refuse at the same byte.
func Check(wasm []byte) ([]byte, error) {
	if len(wasm) < 8 || string(wasm[:4]) != "\x00asm" {
		return wasm, nil // wazero says what is wrong with the header
	}
	top := &wreader{b: wasm, off: 8}
	var tables *tableSection
	var cost hostCost
	for top.off < len(top.b) {
		head := top.off
		id, sec, err := top.section()
		if err != nil {
			return nil, err
		}
		if err := checkSection(id, sec, &tables, &cost); err != nil {
			var over *overLimit
			if errors.As(err, &over) {
				return nil, fmt.Errorf("%s section: %s", sectionName(id), over.msg)
			}
			return nil, fmt.Errorf("%w: %s section: %v", errMalformed, sectionName(id), err)
		}
		if id == 4 {
			tables.head, tables.end = head, top.off
		}
	}
	out := wasm
	if tables != nil {
		var err error
		if out, err = tables.apply(wasm); err != nil {
			return nil, err
		}
		cost.tableEntries = tables.entries
	}
	if err := cost.check(); err != nil {
		return nil, err
	}
	return out, nil
}

var errMalformed = errors.New("not a valid WebAssembly module")

// bad is a structural error: Check prefixes it with errMalformed and
// the section's name.
func bad(format string, args ...any) error { return fmt.Errorf(format, args...) }

// overLimit is a module that is valid WebAssembly but over a host limit.
type overLimit struct{ msg string }

func (e *overLimit) Error() string { return e.msg }

func sectionName(id byte) string {
	names := []string{"custom", "type", "import", "function", "table", "memory", "global",
		"export", "start", "element", "code", "data", "data count", "tag"}
	if int(id) < len(names) {
		return names[id]
	}
	return fmt.Sprintf("unknown (id %d)", id)
}

// checkSection checks one section, adding what it makes every instance
// allocate to cost.
func checkSection(id byte, r *wreader, tables **tableSection, cost *hostCost) error {
	switch id {
	case 0:
		return checkCustom(r)
	case 1:
		return r.each("types", checkType)
	case 2:
		return r.each("imports", checkImport)
	case 3, 13: // function, tag: flat entries, each at least a byte
		_, err := r.count("entries")
		return err
	case 6:
		n, err := r.count("entries")
		cost.globals = uint64(n)
		return err
	case 4:
		t, err := readTables(r)
		*tables = t
		return err
	case 7:
		return r.each("exports", func(r *wreader) error {
			if err := r.vec("export name"); err != nil {
				return err
			}
			if _, err := r.byte(); err != nil {
				return err
			}
			_, err := r.u32()
			return err
		})
	case 9:
		return r.each("element segments", func(r *wreader) error {
			n, err := checkElement(r)
			cost.elemSegments++
			cost.elemItems += uint64(n)
			return err
		})
	case 10:
		return r.each("functions", checkCode)
	case 11:
		return r.each("data segments", func(r *wreader) error {
			cost.dataSegments++
			return checkData(r)
		})
	}
	return nil // memory, start, data count: no allocation by count; others: wazero refuses
}

// checkCustom checks the "name" section, whose maps wazero sizes by their
// counts; other custom sections are bounded by their size.
func checkCustom(r *wreader) error {
	name, err := r.str()
	if err != nil || name != "name" {
		return err
	}
	for r.off < len(r.b) {
		id, _ := r.byte()
		size, err := r.u32()
		if err != nil {
			return err
		}
		switch id {
		case 0:
			err = r.vec("module name")
		case 1:
			err = r.each("function names", func(r *wreader) error { return r.indexName() })
		case 2:
			err = r.each("local names", func(r *wreader) error {
				if _, err := r.u32(); err != nil {
					return err
				}
				return r.each("locals", func(r *wreader) error { return r.indexName() })
			})
		default:
			err = r.skip(size)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func checkType(r *wreader) error {
	b, err := r.byte()
	if err != nil {
		return err
	}
	if b == 0x4e { // a recursive group of function types
		return r.each("types in a group", checkFuncType)
	}
	r.off--
	return checkFuncType(r)
}

func checkFuncType(r *wreader) error {
	if b, err := r.byte(); err != nil || b != 0x60 {
		return bad("a type is not a function type")
	}
	for _, what := range []string{"params", "results"} {
		if err := r.each(what, (*wreader).valtype); err != nil {
			return err
		}
	}
	return nil
}

func checkImport(r *wreader) error {
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
	switch kind {
	case 0: // function
		_, err = r.u32()
	case 1: // table
		_, err = readTable(r)
	case 2: // memory
		_, err = r.limits()
	case 3: // global
		if err = r.valtype(); err == nil {
			_, err = r.byte()
		}
	case 4: // tag
		if _, err = r.byte(); err == nil {
			_, err = r.u32()
		}
	default:
		err = bad("import kind %#x", kind)
	}
	return err
}

// checkElement reads one element segment and returns its number of items.
func checkElement(r *wreader) (uint32, error) {
	flags, err := r.u32()
	if err != nil {
		return 0, err
	}
	if flags > 7 {
		return 0, bad("element segment flags %d", flags)
	}
	if flags&2 != 0 && flags&1 == 0 { // an active segment with a table index
		if _, err := r.u32(); err != nil {
			return 0, err
		}
	}
	if flags&1 == 0 { // active: an offset
		if err := r.constExpr(); err != nil {
			return 0, err
		}
	}
	if flags&3 != 0 { // not the legacy form: an element kind or type
		if flags&4 == 0 {
			_, err = r.byte()
		} else {
			err = r.valtype()
		}
		if err != nil {
			return 0, err
		}
	}
	what, item := "element expressions", (*wreader).constExpr
	if flags&4 == 0 {
		what, item = "function indices", func(r *wreader) error { _, err := r.u32(); return err }
	}
	n, err := r.count(what)
	if err != nil {
		return 0, err
	}
	for range n {
		if err := item(r); err != nil {
			return 0, err
		}
	}
	return n, nil
}

func checkCode(r *wreader) error {
	size, err := r.u32()
	if err != nil {
		return err
	}
	start := r.off
	if err := r.skip(size); err != nil {
		return bad("a function body declares %d bytes, but %d remain", size, len(r.b)-start)
	}
	body := &wreader{b: r.b[start:r.off]}
	var locals uint64
	err = body.each("local declarations", func(b *wreader) error {
		n, err := b.u32()
		if err != nil {
			return err
		}
		if locals += uint64(n); locals > MaxLocals {
			return &overLimit{fmt.Sprintf("a function declares more than %d locals, the host's limit", MaxLocals)}
		}
		return b.valtype()
	})
	return err
}

func checkData(r *wreader) error {
	flags, err := r.u32()
	if err != nil {
		return err
	}
	switch flags {
	case 0:
		err = r.constExpr()
	case 2:
		if _, err = r.u32(); err == nil {
			err = r.constExpr()
		}
	case 1:
	default:
		return bad("data segment flags %d", flags)
	}
	if err != nil {
		return err
	}
	return r.vec("data segment")
}

// section reads the next section of the module at r: its id and a reader
// over its body, r moved past it; a size that runs past the end is
// errMalformed.
func (r *wreader) section() (byte, *wreader, error) {
	head := r.off
	id, _ := r.byte()
	size, err := r.u32()
	if err == nil {
		err = r.skip(size)
	}
	if err != nil {
		return id, nil, fmt.Errorf("%w: %s section: declares %d bytes, %d remain", errMalformed, sectionName(id), size, len(r.b)-head)
	}
	return id, &wreader{b: r.b[r.off-int(size) : r.off]}, nil
}
