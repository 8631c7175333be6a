// Command minimalregexp is the minimal reactor (host/testdata/minimal)
// with package regexp linked in, as tools-src/text links it for
// text.find: the floor for a Go tool that imports regexp. regexp/syntax
// keeps unicode's category and script tables, which unicode builds as
// maps in its init, in every instance; BenchmarkFreshRatio sets
// tools-src/text beside this floor as well as beside the plain one, so
// that the cost of the SDK and the cost of the tool's own imports are
// told apart.
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -o minimalregexp.wasm ./host/testdata/minimalregexp
package main

import (
	"regexp"
	"unsafe"

	_ "github.com/toolhost/toolhost/host/testdata/minimal/reactor"
)

// matches is never called by the benchmark; exporting it is what keeps
// regexp in the module, as a tool that searches would.
//
//go:wasmexport minimal_matches
func matches(ptr, n int32) int32 {
	s := unsafe.String((*byte)(unsafe.Pointer(uintptr(ptr))), n)
	if _, err := regexp.Compile(s); err != nil {
		return 0
	}
	return 1
}

func main() {}
