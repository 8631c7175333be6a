// Package printable keeps text that others wrote from acting on a
// terminal or a reader: guest notes on their way to a client or a
// terminal, a server's messages printed by the CLI, identities and
// idempotency keys. A control character (C0, DEL, C1), a line or paragraph
// separator, or a bidirectional formatting character (embeddings,
// overrides, isolates, marks) can clear a screen, set a window title,
// write the clipboard (OSC 52), forge a line, or make text read in an
// order other than its bytes'.
package printable

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Unsafe reports whether r is a character that Line escapes: a C0 or C1
// control, DEL, U+2028/U+2029, or a bidirectional formatting character
// (U+061C, U+200E, U+200F, U+202A–U+202E, U+2066–U+2069).
func Unsafe(r rune) bool {
	switch {
	case unicode.IsControl(r): // C0, DEL and C1
		return true
	case r == '\u2028', r == '\u2029': // line and paragraph separators
		return true
	case r == '\u061c', r == '\u200e', r == '\u200f':
		return true
	case r >= '\u202a' && r <= '\u202e', r >= '\u2066' && r <= '\u2069':
		return true
	}
	return false
}

// First returns the first unsafe character of s and its byte offset, or
// ok false when s has none. Invalid UTF-8 is not reported here.
func First(s string) (r rune, at int, ok bool) {
	for i, c := range s {
		if Unsafe(c) {
			return c, i, true
		}
	}
	return 0, 0, false
}

// Line returns s as one line of printable text: each unsafe character is
// written as a Go escape (\n, \r, \t, \x1b, \u009b, \u202e), which a reader sees
// and a terminal does not act on, and invalid UTF-8 becomes U+FFFD. Text
// without any comes back as it is, unallocated.
func Line(s string) string {
	clean := utf8.ValidString(s)
	if clean {
		if _, _, found := First(s); !found {
			return s
		}
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	for _, c := range s {
		if !Unsafe(c) {
			b.WriteRune(c) // utf8.RuneError for each invalid byte
			continue
		}
		// QuoteRune gives 'x' with x escaped; drop the quotes.
		q := strconv.QuoteRuneToASCII(c)
		b.WriteString(q[1 : len(q)-1])
	}
	return b.String()
}

// JSON returns the JSON text b with every unsafe character but JSON's
// white space (tab, LF, CR) written as a \uXXXX escape: the same JSON
// value to any reader, and nothing a terminal acts on. encoding/json
// escapes C0 controls already but leaves DEL, C1 controls and
// bidirectional formatting characters raw. Those can stand only inside
// JSON strings, where the escape is valid, so b is not parsed; white
// space outside strings is layout, and inside them encoding/json has
// escaped it. b without any is returned as it is.
func JSON(b []byte) []byte {
	i := 0
	for i < len(b) {
		r, n := utf8.DecodeRune(b[i:])
		if escapeInJSON(r) {
			break
		}
		i += n
	}
	if i == len(b) {
		return b
	}
	out := make([]byte, 0, len(b)+16)
	out = append(out, b[:i]...)
	for i < len(b) {
		r, n := utf8.DecodeRune(b[i:])
		if escapeInJSON(r) {
			out = fmt.Appendf(out, `\u%04x`, r)
		} else {
			out = append(out, b[i:i+n]...)
		}
		i += n
	}
	return out
}

func escapeInJSON(r rune) bool {
	return Unsafe(r) && r != '\t' && r != '\n' && r != '\r'
}
