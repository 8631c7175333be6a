package config

import (
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/BurntSushi/toml"
)

// keyPos is where a key first appears in the source: its 1-based line and
// byte offset.
type keyPos struct{ line, off int }

// indexKeys maps every key path of a TOML document, in toml.Key.String()
// form, to where it first appears: a table header's line for the table, a
// key's line for the key, and for a table that is only implied (the tools
// and tools."x" of [tools."x".breaker], or of tools."x".timeout = "1s") the
// first line that names it. Keys inside inline tables, also multi-line
// ones, count; text inside strings and comments does not. Array elements
// are not told apart: a key inside [[a]] or a = [{...}] is recorded as a.key.
//
// BurntSushi/toml keeps key positions to itself, so this is a small TOML
// scanner of its own. It is meant for documents the parser accepted, but
// never panics or loops on any input.
func indexKeys(src string) map[string]keyPos {
	s := &scanner{src: src, line: 1, keys: make(map[string]keyPos)}
	s.src = strings.TrimPrefix(s.src, "\ufeff")
	s.base = len(src) - len(s.src)
	s.document()
	return s.keys
}

type scanner struct {
	src  string
	base int // bytes of src dropped at the start (a BOM)
	i    int
	line int
	keys map[string]keyPos
	// elems counts the [[x]] headers seen per array, so that the keys of
	// element N are also recorded under x, elemKey(N), key (see elemKey).
	elems map[string]int
}

// elemKey is the path segment of the n-th (0-based) element of an array of
// tables in the key index: [[access]] rule 2's tools key is recorded as
// access, elemKey(1), tools beside access.tools. No TOML key can clash
// with it in a valid document: an array's children are elements.
func elemKey(n int) string { return "[" + strconv.Itoa(n) + "]" }

func (s *scanner) eof() bool { return s.i >= len(s.src) }

func (s *scanner) peek() byte {
	if s.i >= len(s.src) {
		return 0
	}
	return s.src[s.i]
}

// next consumes one byte, counting lines.
func (s *scanner) next() {
	if s.src[s.i] == '\n' {
		s.line++
	}
	s.i++
}

// skipBlank skips spaces and tabs.
func (s *scanner) skipBlank() {
	for !s.eof() && (s.src[s.i] == ' ' || s.src[s.i] == '\t') {
		s.i++
	}
}

// skipSpace skips whitespace, newlines and comments.
func (s *scanner) skipSpace() {
	for !s.eof() {
		switch s.src[s.i] {
		case ' ', '\t', '\r':
			s.i++
		case '\n':
			s.next()
		case '#':
			s.skipLine()
		default:
			return
		}
	}
}

// skipLine skips to the end of the line, leaving the newline.
func (s *scanner) skipLine() {
	if j := strings.IndexByte(s.src[s.i:], '\n'); j >= 0 {
		s.i += j
	} else {
		s.i = len(s.src)
	}
}

func (s *scanner) record(path []string, pos keyPos) {
	for n := 1; n <= len(path); n++ {
		k := toml.Key(path[:n]).String()
		if _, ok := s.keys[k]; !ok {
			s.keys[k] = pos
		}
	}
}

func (s *scanner) pos() keyPos { return keyPos{line: s.line, off: s.base + s.i} }

func (s *scanner) document() {
	var table, elem []string
	for {
		s.skipSpace()
		if s.eof() {
			return
		}
		pos := s.pos()
		if s.peek() == '[' { // [table] or [[array.of.tables]]
			s.i++
			array := s.peek() == '['
			if array {
				s.i++
			}
			table, elem = s.key(), nil
			s.record(table, pos)
			if array {
				elem = s.element(table, pos)
			}
			s.skipLine()
			continue
		}
		key := s.key()
		if len(key) == 0 { // not TOML: resynchronise on the next line
			s.skipLine()
			continue
		}
		full := concat(table, key)
		s.record(full, pos)
		if elem != nil {
			s.record(concat(elem, key), pos)
		}
		s.skipBlank()
		if s.peek() == '=' {
			s.i++
			s.value(full)
		}
		s.skipLine()
	}
}

// element records the next element of the array of tables at table and
// returns its path.
func (s *scanner) element(table []string, pos keyPos) []string {
	if s.elems == nil {
		s.elems = make(map[string]int)
	}
	k := toml.Key(table).String()
	elem := concat(table, []string{elemKey(s.elems[k])})
	s.elems[k]++
	s.record(elem, pos)
	return elem
}

// key reads a possibly dotted key: bare, "basic" and 'literal' parts with
// blanks around the dots. It returns nil if there is no key here.
func (s *scanner) key() []string {
	var parts []string
	for {
		s.skipBlank()
		var part string
		switch c := s.peek(); {
		case c == '"':
			part = s.basicString()
		case c == '\'':
			part = s.literalString()
		case isBare(c):
			start := s.i
			for !s.eof() && isBare(s.src[s.i]) {
				s.i++
			}
			part = s.src[start:s.i]
		default:
			return parts
		}
		parts = append(parts, part)
		s.skipBlank()
		if s.peek() != '.' {
			return parts
		}
		s.i++
	}
}

func isBare(c byte) bool {
	return 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '_' || c == '-'
}

// basicString reads a one-line "string" and returns its value, with TOML's
// escapes (\b \t \n \f \r \e \" \\ \xHH \uHHHH \UHHHHHHHH) decoded.
func (s *scanner) basicString() string {
	s.i++
	var b strings.Builder
	for !s.eof() {
		c := s.src[s.i]
		switch {
		case c == '"':
			s.i++
			return b.String()
		case c == '\n':
			return b.String()
		case c == '\\' && s.i+1 < len(s.src) && s.src[s.i+1] != '\n':
			e := s.src[s.i+1]
			s.i += 2
			switch e {
			case 'b':
				b.WriteByte('\b')
			case 't':
				b.WriteByte('\t')
			case 'n':
				b.WriteByte('\n')
			case 'f':
				b.WriteByte('\f')
			case 'r':
				b.WriteByte('\r')
			case 'e':
				b.WriteByte(0x1b)
			case 'x':
				b.WriteRune(s.hex(2))
			case 'u':
				b.WriteRune(s.hex(4))
			case 'U':
				b.WriteRune(s.hex(8))
			default: // \" and \\ (anything else is not TOML)
				b.WriteByte(e)
			}
		default:
			b.WriteByte(c)
			s.i++
		}
	}
	return b.String()
}

// hex reads n hex digits as a code point.
func (s *scanner) hex(n int) rune {
	end := min(s.i+n, len(s.src))
	v, err := strconv.ParseUint(s.src[s.i:end], 16, 32)
	s.i = end
	if err != nil || !utf8.ValidRune(rune(v)) {
		return utf8.RuneError
	}
	return rune(v)
}

// literalString reads a one-line 'string'.
func (s *scanner) literalString() string {
	s.i++
	start := s.i
	for !s.eof() && s.src[s.i] != '\'' && s.src[s.i] != '\n' {
		s.i++
	}
	v := s.src[start:s.i]
	if s.peek() == '\'' {
		s.i++
	}
	return v
}

// multiline skips a multi-line string, basic (q is '"') or literal;
// the three opening quotes are next.
func (s *scanner) multiline(q byte) {
	s.i += 3
	for !s.eof() {
		c := s.src[s.i]
		switch {
		case c == '\\' && q == '"':
			s.i++
			if !s.eof() {
				s.next()
			}
		case c == q && strings.HasPrefix(s.src[s.i:], string([]byte{q, q, q})):
			// The closing quotes, and up to two more that belong to
			// the string: """a""""" is a"".
			for !s.eof() && s.src[s.i] == q {
				s.i++
			}
			return
		default:
			s.next()
		}
	}
}

// value skips one value, recording the keys of inline tables under path.
func (s *scanner) value(path []string) {
	s.skipBlank()
	switch c := s.peek(); {
	case c == '"' && strings.HasPrefix(s.src[s.i:], `"""`):
		s.multiline('"')
	case c == '\'' && strings.HasPrefix(s.src[s.i:], `'''`):
		s.multiline('\'')
	case c == '"':
		s.basicString()
	case c == '\'':
		s.literalString()
	case c == '[':
		s.i++
		for {
			s.skipSpace()
			switch s.peek() {
			case 0:
				if s.eof() {
					return
				}
			case ']':
				s.i++
				return
			case ',':
				s.i++
				continue
			}
			at := s.i
			s.value(path)
			if s.i == at { // not a value: step over it
				s.next()
			}
		}
	case c == '{':
		s.i++
		for {
			s.skipSpace() // TOML 1.1: newlines and comments are allowed
			switch s.peek() {
			case 0:
				if s.eof() {
					return
				}
			case '}':
				s.i++
				return
			case ',':
				s.i++
				continue
			}
			pos := s.pos()
			key := s.key()
			if len(key) == 0 {
				s.next()
				continue
			}
			full := concat(path, key)
			s.record(full, pos)
			s.skipBlank()
			if s.peek() == '=' {
				s.i++
				s.value(full)
			}
		}
	default:
		s.scalar()
	}
}

// scalar skips a number, boolean, date or time. A date and a time may be
// separated by a space: 1979-05-27 07:32:00Z.
func (s *scanner) scalar() {
	start := s.i
	for !s.eof() {
		switch s.src[s.i] {
		case ' ':
			if isDate(s.src[start:s.i]) && s.i+1 < len(s.src) && '0' <= s.src[s.i+1] && s.src[s.i+1] <= '9' {
				s.i++
				continue
			}
			return
		case '\t', '\r', '\n', ',', ']', '}', '#', '[', '{', '"', '\'', '=':
			return
		}
		s.i++
	}
}

// isDate reports whether v looks like 1979-05-27.
func isDate(v string) bool {
	if len(v) != 10 || v[4] != '-' || v[7] != '-' {
		return false
	}
	for i := range len(v) {
		if i != 4 && i != 7 && (v[i] < '0' || v[i] > '9') {
			return false
		}
	}
	return true
}

func concat(a, b []string) []string {
	out := make([]string, 0, len(a)+len(b))
	return append(append(out, a...), b...)
}
