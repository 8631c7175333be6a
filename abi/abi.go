// Package abi is the wire contract between toolhost and its guest modules:
// the names of the exports a tool module provides, the JSON documents that
// cross the boundary, and the rules that make one valid.
//
// It imports only the standard library so that hosts, guests written in Go
// and third-party tooling can share it. Nothing in it is mutable: the
// contract is version 1 and changes only with a new version number.
package abi

import (
	"encoding/json"
	"fmt"
	"io"
)

// Version is the guest ABI version this package describes. A module's
// toolhost_abi_version export must return it.
const Version = 1

// Names of the exports a tool module provides.
const (
	// ExportMemory is the guest's linear memory.
	ExportMemory = "memory"
	// ExportInitialize is the optional WASI reactor initialiser, run once per
	// instance before any other export.
	ExportInitialize = "_initialize"
	// ExportABIVersion is `() -> i32` and returns Version.
	ExportABIVersion = "toolhost_abi_version"
	// ExportAlloc is `(size i32) -> i32`: a pointer to size writable bytes,
	// valid until the next toolhost_call returns.
	ExportAlloc = "toolhost_alloc"
	// ExportDescribe is `() -> i64`: the packed pointer and length of the
	// manifest JSON.
	ExportDescribe = "toolhost_describe"
	// ExportCall is `(name_ptr, name_len, args_ptr, args_len i32) -> i64`:
	// the packed pointer and length of the response JSON.
	ExportCall = "toolhost_call"
)

// ManifestSection is the name of the custom section in which a module may
// carry its manifest (what its toolhost_describe returns) and the facts a
// host reads from its compiled code, so that a host can list its tools
// before compiling it. `toolhost manifest embed` writes it; the host
// checks it against the module's own describe once the module compiles,
// and refuses a module whose section says otherwise. Its layout is in
// docs/ABI.md.
const ManifestSection = "toolhost.manifest"

// Defaults the manifest falls back to when neither a tool nor the module sets
// a value.
const (
	// DefaultTimeoutMS is a tool's timeout when its manifest names none.
	DefaultTimeoutMS = 30000
	// MaxToolNameLen is the longest tool name accepted.
	MaxToolNameLen = 128
)

// Pack combines a guest pointer and length into the i64 that
// toolhost_describe and toolhost_call return: ptr in the high 32 bits, len in
// the low 32 bits.
func Pack(ptr, length uint32) uint64 {
	return uint64(ptr)<<32 | uint64(length)
}

// Unpack splits an i64 returned by toolhost_describe or toolhost_call into
// its pointer and length.
func Unpack(v uint64) (ptr, length uint32) {
	return uint32(v >> 32), uint32(v)
}

// ValidToolName reports whether name matches ^[A-Za-z0-9_.-]{1,128}$.
func ValidToolName(name string) bool {
	if len(name) == 0 || len(name) > MaxToolNameLen {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case c == '_', c == '.', c == '-':
		default:
			return false
		}
	}
	return true
}

// ErrorKind classifies an error a guest reports.
type ErrorKind string

// The error kinds a guest may report. Only KindTransient is retried by the
// dispatcher.
const (
	// KindTransient: the call may succeed if tried again (an upstream 429 or
	// 503, a dropped connection).
	KindTransient ErrorKind = "transient"
	// KindSchema: the arguments are well-formed JSON but the tool cannot use
	// them. The caller must change its input.
	KindSchema ErrorKind = "schema"
	// KindInternal: the tool failed in a way retrying will not fix.
	KindInternal ErrorKind = "internal"
)

// Valid reports whether k is one of the kinds a guest may report.
func (k ErrorKind) Valid() bool {
	return k == KindTransient || k == KindSchema || k == KindInternal
}

// ContractError reports a document or value that breaks the contract. It is
// a type rather than a sentinel variable so that this package keeps no
// mutable public state; match it with errors.As.
type ContractError struct {
	// What names the document: "manifest", "response".
	What string
	// Reason says exactly what is wrong, in terms a tool author can act on.
	Reason string
}

func (e *ContractError) Error() string {
	return e.What + ": " + e.Reason
}

func contractErrorf(what, format string, args ...any) error {
	return &ContractError{What: what, Reason: fmt.Sprintf(format, args...)}
}

// atEOF reports whether nothing but white space follows the value dec has
// just decoded. (Decoder.More is not enough: it is false before a stray
// '}' or ']', so `{"result":1}}` would pass.)
func atEOF(dec *json.Decoder) bool {
	_, err := dec.Token()
	return err == io.EOF
}
