package registry

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
)

// MaxWireNameLen is the longest client-safe wire name: Claude Desktop and
// OpenAI's API accept tool names matching ^[a-zA-Z0-9_-]{1,64}$ only.
const MaxWireNameLen = 64

// wireHashLen is how many hex digits of sha256 end a shortened wire name.
const wireHashLen = 8

// SafeName is the client-safe wire name of manifest name name: every
// character outside [a-zA-Z0-9_-] (each rune, not each byte) replaced by
// "_", so "text.count" is "text_count". A result over MaxWireNameLen bytes
// keeps its first 55 bytes, then "_" and the first 8 hex digits of the
// sha256 of name (the name before replacement, so that "a.b…" and "a_b…"
// differ), 64 bytes in all: stable across runs and machines. The empty
// string maps to "_".
func SafeName(name string) string {
	return WireName("", name)
}

// WireName is SafeName of prefix+name, the hash taken over prefix+name: the
// wire name of a tool whose module the operator gave a prefix. prefix is
// expected to be client-safe already.
func WireName(prefix, name string) string {
	var b strings.Builder
	b.WriteString(prefix)
	for _, r := range name {
		if safeRune(r) {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	s := b.String()
	if s == "" {
		return "_"
	}
	if len(s) <= MaxWireNameLen {
		return s
	}
	sum := sha256.Sum256([]byte(prefix + name))
	keep := MaxWireNameLen - 1 - wireHashLen
	return s[:keep] + "_" + hex.EncodeToString(sum[:])[:wireHashLen]
}

// ValidWireName reports whether s matches ^[a-zA-Z0-9_-]{1,64}$, the names
// every mainstream MCP client accepts.
func ValidWireName(s string) bool {
	if len(s) == 0 || len(s) > MaxWireNameLen {
		return false
	}
	for _, r := range s {
		if !safeRune(r) {
			return false
		}
	}
	return true
}

func safeRune(r rune) bool {
	return 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9' || r == '_' || r == '-'
}

// Resolve finds a tool by its wire name, among the tools that are not
// Hidden, or else by its manifest name (hidden tools included: the caller
// decides what hiding means to it). The wire name, what clients see in
// tools/list, wins when one tool's manifest name is another's wire name
// (a module prefix or an operator's name can resolve a clash so).
func (r *Registry) Resolve(name string) (*Tool, bool) {
	if t, ok := r.byWire[name]; ok {
		return t, true
	}
	t, ok := r.byName[name]
	return t, ok
}

// indexWire sets t.WireName when it is empty and, unless t is hidden,
// indexes it by wire name. A wire name another tool has is an error naming
// both.
func (r *Registry) indexWire(t *Tool) error {
	if t.WireName == "" {
		t.WireName = SafeName(t.Name)
	}
	if t.Hidden {
		return nil
	}
	if o, ok := r.byWire[t.WireName]; ok {
		return &ClashError{Wire: t.WireName, Tool: t.Name, Other: o.Name}
	}
	r.byWire[t.WireName] = t
	return nil
}

// ClashError is two tools listed under one wire name.
type ClashError struct {
	// Wire is the wire name both would have.
	Wire string
	// Tool is the later tool's manifest name, Other the earlier one's.
	Tool, Other string
}

func (e *ClashError) Error() string {
	return fmt.Sprintf("tools %q and %q would both be listed as %q; "+
		"give one another wire name in the config ([tools.%q] name = \"…\", or a module prefix), or hide it (expose = false)",
		e.Other, e.Tool, e.Wire, e.Tool)
}
