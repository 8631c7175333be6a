package main

import (
	"io"
	"strings"

	"github.com/toolhost/toolhost/internal/printable"
)

// What the CLI prints from a server (results, envelopes, task progress,
// tool listings, events) or from a module (inspect) is others' text, and
// reaches a terminal: an escape sequence in it could write the clipboard
// (OSC 52), set the window title, clear the screen, or forge a line such
// as "task t1: completed". JSON goes out with those characters as \u
// escapes (the same value to a program reading it); text goes out as one
// line with them escaped. See internal/printable.

// jsonWriter passes JSON text to w with every unsafe character escaped.
// Each Write must hold whole characters, as json.Encoder's do.
type jsonWriter struct{ w io.Writer }

func (j jsonWriter) Write(p []byte) (int, error) {
	if _, err := j.w.Write(printable.JSON(p)); err != nil {
		return 0, err
	}
	return len(p), nil
}

// safeJSON is printable.JSON: b, escaped for a terminal.
func safeJSON(b []byte) []byte { return printable.JSON(b) }

// safeLine is printable.Line: s as one line of printable text.
func safeLine(s string) string { return printable.Line(s) }

// safeLines escapes each line of s, keeping its line breaks: for the CLI's
// own multi-line errors, which may quote a server's or a module's text.
func safeLines(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = printable.Line(l)
	}
	return strings.Join(lines, "\n")
}
