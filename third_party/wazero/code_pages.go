package wazero

import "github.com/toolhost/toolhost/third_party/wazero/internal/wasm"

// ReleaseCodePages lets the machine code of compiled leave the process's
// memory until it next runs, and reports whether it did. It does so only
// for code the compiler mapped from the compilation cache's file (on Linux:
// the pages stay in the page cache, and the next run of each is a minor
// fault); code compiled in the process, or copied from the cache, stays.
// It is safe while instances of the module run: a page they need is
// mapped again. This is the toolhost fork's (third_party/README.md).
func ReleaseCodePages(compiled CompiledModule) bool {
	c, ok := compiled.(*compiledModule)
	if !ok {
		return false
	}
	r, ok := c.compiledEngine.(wasm.CodePageReleaser)
	return ok && r.ReleaseCodePages(c.module)
}
