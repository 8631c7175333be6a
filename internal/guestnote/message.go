package guestnote

import (
	"strings"
	"unicode/utf8"

	"github.com/toolhost/toolhost/internal/printable"
)

// Memory is the part of a guest's linear memory a note reads (wazero's
// api.Memory has it).
type Memory interface {
	// Size is the memory's size in bytes.
	Size() uint32
	// Read returns a view of byteCount bytes at offset, false when the
	// range is outside the memory.
	Read(offset, byteCount uint32) ([]byte, bool)
}

// What readMessage had to fix.
const (
	truncated = 1 << iota
	repaired
	escaped
)

// ellipsis ends a truncated message, so a reader knows there was more.
const ellipsis = "…"

// readMessage copies the message at [ptr, ptr+n) of mem: false when any of
// that range is outside mem (a length the guest made up is not trusted
// because it is in range at its start). At most limit bytes come back:
// a longer message is cut at a character boundary and ends in "…", and
// only the bytes kept are read, so a huge length costs nothing. Invalid
// UTF-8 is replaced with U+FFFD, as MCP messages are JSON strings, and
// the result is one line of printable text (printable.Line): a note ends
// up in clients' windows and on terminals (toolhost call --task prints
// them), where an escape sequence could write the clipboard, clear the
// screen or forge a line.
func readMessage(mem Memory, ptr, n uint32, limit int) (string, int, bool) {
	if n == 0 {
		return "", 0, true
	}
	if mem == nil || uint64(ptr)+uint64(n) > uint64(mem.Size()) {
		return "", 0, false
	}
	fixed := 0
	want := n
	if uint64(n) > uint64(limit) {
		fixed |= truncated
		want = uint32(limit)
	}
	b, ok := mem.Read(ptr, want)
	if !ok {
		return "", 0, false
	}
	s := string(b)
	if fixed&truncated != 0 {
		s = cut(s, limit-len(ellipsis)) // before the check: a character cut by the read is not invalid
	}
	if !utf8.ValidString(s) {
		fixed |= repaired
		s = strings.ToValidUTF8(s, "\uFFFD")
		// Each replacement may be longer than the bytes it replaced.
		if room := limit - len(ellipsis); len(s) > limit || (fixed&truncated != 0 && len(s) > room) {
			fixed |= truncated
			s = cut(s, room)
		}
	}
	if line := printable.Line(s); line != s {
		fixed |= escaped
		// Escapes are longer than what they replace.
		if len(line) > limit || (fixed&truncated != 0 && len(line) > limit-len(ellipsis)) {
			fixed |= truncated
			line = cut(line, limit-len(ellipsis))
		}
		s = line
	}
	if fixed&truncated != 0 {
		s += ellipsis
	}
	return s, fixed, true
}

// cut shortens s to at most n bytes without splitting a character.
func cut(s string, n int) string {
	if n <= 0 {
		return ""
	}
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
