package config

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/pelletier/go-toml/v2"
	"github.com/pelletier/go-toml/v2/unstable"
)

// keyPos is where a key first appears in the source: its 1-based line and
// byte offset.
type keyPos struct{ line, off int }

// decode parses a TOML document with go-toml: the generic tree its
// Unmarshal yields (a syntax error is a *toml.DecodeError, with its line),
// and where each key is.
//
// The positions come from go-toml's own parser (package unstable), whose
// nodes carry their byte ranges, so they always agree with the tree: the
// same parser read both. In the tree, arrays of tables ([[x]]) are
// []map[string]any, as the checker tells them from inline arrays ([]any).
func decode(src []byte) (tree map[string]any, keys map[string]keyPos, err error) {
	defer func() {
		if r := recover(); r != nil {
			tree, keys, err = nil, nil, fmt.Errorf("the TOML parser failed: %v", r)
		}
	}()
	if err := toml.Unmarshal(src, &tree); err != nil {
		return nil, nil, err
	}
	if tree == nil {
		tree = map[string]any{}
	}
	ix := indexKeys(src)
	retypeArrayTables(tree, nil, ix.arrays)
	return tree, ix.keys, nil
}

// keyIndex maps every key path of a document, in keyString form, to where
// it first appears: a table header's line for the table, a key's line for
// the key, and for a table that is only implied (the tools and tools."x"
// of [tools."x".breaker], or of tools."x".timeout = "1s") the first line
// that names it. Keys inside inline tables count, also in multi-line ones.
// Array elements are not told apart, but for arrays of tables: a key of
// element N of [[x]] is recorded both as x.key and as x, elemKey(N), key,
// so that [[access]] rule 2's problems point into rule 2.
type keyIndex struct {
	keys     map[string]keyPos
	arrays   map[string]bool // the paths of arrays of tables
	elems    map[string]int  // [[x]] headers seen, by path
	newlines []int           // offsets of the source's newlines
}

// indexKeys indexes a document go-toml's Unmarshal accepted; on any other
// it indexes what comes before the first error.
func indexKeys(src []byte) *keyIndex {
	ix := &keyIndex{keys: map[string]keyPos{}, arrays: map[string]bool{}, elems: map[string]int{}}
	for i, b := range src {
		if b == '\n' {
			ix.newlines = append(ix.newlines, i)
		}
	}
	var p unstable.Parser
	p.Reset(src)
	var table, elem []string
	for p.NextExpression() {
		e := p.Expression()
		switch e.Kind {
		case unstable.Table, unstable.ArrayTable:
			var pos keyPos
			table, pos = ix.key(e.Key())
			elem = nil
			ix.record(table, pos)
			if e.Kind == unstable.ArrayTable {
				k := keyString(table)
				ix.arrays[k] = true
				elem = concat(table, []string{elemKey(ix.elems[k])})
				ix.elems[k]++
				ix.record(elem, pos)
			}
		case unstable.KeyValue:
			key, pos := ix.key(e.Key())
			full := concat(table, key)
			ix.record(full, pos)
			if elem != nil {
				ix.record(concat(elem, key), pos)
			}
			ix.value(full, e.Value())
		}
	}
	return ix
}

// elemKey is the path segment of the n-th (0-based) element of an array of
// tables in the key index: [[access]] rule 2's tools key is recorded as
// access, elemKey(1), tools beside access.tools. No TOML key can clash
// with it in a valid document: an array's children are elements.
func elemKey(n int) string { return "[" + strconv.Itoa(n) + "]" }

// key returns a dotted key's parts and where its first part is.
func (ix *keyIndex) key(it unstable.Iterator) ([]string, keyPos) {
	var parts []string
	var pos keyPos
	for it.Next() {
		n := it.Node()
		if parts == nil {
			pos = ix.pos(int(n.Raw.Offset))
		}
		parts = append(parts, string(n.Data))
	}
	return parts, pos
}

// value records the keys of the inline tables in value v, under path.
func (ix *keyIndex) value(path []string, v *unstable.Node) {
	switch v.Kind {
	case unstable.Array:
		for it := v.Children(); it.Next(); {
			ix.value(path, it.Node())
		}
	case unstable.InlineTable:
		for it := v.Children(); it.Next(); {
			kv := it.Node()
			key, pos := ix.key(kv.Key())
			full := concat(path, key)
			ix.record(full, pos)
			ix.value(full, kv.Value())
		}
	}
}

// record sets the position of path and of the tables it implies, where
// none is known yet.
func (ix *keyIndex) record(path []string, pos keyPos) {
	for n := 1; n <= len(path); n++ {
		k := keyString(path[:n])
		if _, ok := ix.keys[k]; !ok {
			ix.keys[k] = pos
		}
	}
}

func (ix *keyIndex) pos(off int) keyPos {
	line, _ := slices.BinarySearch(ix.newlines, off)
	return keyPos{line: line + 1, off: off}
}

// retypeArrayTables turns the []any of every array of tables in t into a
// []map[string]any.
func retypeArrayTables(t map[string]any, path []string, arrays map[string]bool) {
	for k, v := range t {
		kp := concat(path, []string{k})
		switch x := v.(type) {
		case map[string]any:
			retypeArrayTables(x, kp, arrays)
		case []any:
			if !arrays[keyString(kp)] {
				continue
			}
			elems := make([]map[string]any, 0, len(x))
			for _, e := range x {
				m, ok := e.(map[string]any)
				if !ok {
					elems = nil
					break
				}
				retypeArrayTables(m, kp, arrays)
				elems = append(elems, m)
			}
			if elems != nil {
				t[k] = elems
			}
		}
	}
}

// keyString writes a key path as TOML does: bare parts as they are, others
// in double quotes with TOML's escapes (tools."db.write".timeout).
func keyString(path []string) string {
	var b strings.Builder
	for i, k := range path {
		if i > 0 {
			b.WriteByte('.')
		}
		if k != "" && strings.IndexFunc(k, func(r rune) bool { return !isBare(r) }) < 0 {
			b.WriteString(k)
			continue
		}
		b.WriteByte('"')
		for _, r := range k {
			switch r {
			case '"', '\\':
				b.WriteByte('\\')
				b.WriteRune(r)
			case '\b':
				b.WriteString(`\b`)
			case '\t':
				b.WriteString(`\t`)
			case '\n':
				b.WriteString(`\n`)
			case '\f':
				b.WriteString(`\f`)
			case '\r':
				b.WriteString(`\r`)
			default:
				if r < 0x20 || r == 0x7f {
					fmt.Fprintf(&b, `\u%04x`, r)
				} else {
					b.WriteRune(r)
				}
			}
		}
		b.WriteByte('"')
	}
	return b.String()
}

func isBare(r rune) bool {
	return 'A' <= r && r <= 'Z' || 'a' <= r && r <= 'z' || '0' <= r && r <= '9' || r == '_' || r == '-'
}

func concat(a, b []string) []string {
	out := make([]string, 0, len(a)+len(b))
	return append(append(out, a...), b...)
}
