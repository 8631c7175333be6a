package host

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"time"

	"github.com/toolhost/toolhost/host/internal/membuf"
)

// listInterpreted lists a cold module that carries no manifest section
// (the caller has looked)
// from its describe run on the interpreter (Config.Interpret, with Lazy),
// instead of compiling it first: a Go module's compile takes seconds, and
// a tools/list waits for it, where translating it for the interpreter and
// describing it takes about 0.15 s. The module is checked as a compile
// checks it (wasmcheck, validation, imports and exports, the memory floor)
// and described in a fresh instance under Config.DescribeTimeout; it is
// returned uncompiled, as a describe cache entry would list it, and the
// entry is written for the next start. Its code compiles in the
// background (Config.WarmUp) or on its first call; a compile that finds
// other facts fails its calls and drops the entry, as for any cached
// listing.
//
// Nil means the module is loaded the usual way, compiled first: it is
// over MaxInterpretBytes, an Extism plugin, in the compilation cache
// already (a compile is then milliseconds), or anything about it fails
// on the interpreter, whose error the compile then gives in full. One
// module at a time is described so, as one at a time has an interpreted
// form, which bounds the heap their translated code holds.
func (r *Runtime) listInterpreted(ctx context.Context, path string, wasm []byte, sum [sha256.Size]byte) *Module {
	if !r.cfg.Interpret || len(wasm) > MaxInterpretBytes || r.child.Marked(sum) {
		return nil
	}
	select {
	case r.interp.listing <- struct{}{}:
	case <-ctx.Done():
		return nil
	}
	defer func() { <-r.interp.listing }()
	start := time.Now()
	sha := hex.EncodeToString(sum[:])
	owner := &Module{Path: path, SHA256: sha, rt: r, mem: membuf.NewPool(r.mem)}
	mod, err := r.compileOn(ctx, path, wasm, sum, wantExports, "", owner)
	if err != nil {
		return nil
	}
	defer func() { _ = mod.code.Close(context.Background()) }()
	if mod.ext != nil {
		return nil // described through its own exports, by the compiled path
	}
	manifest, raw, err := mod.describe(ctx)
	if err != nil {
		return nil
	}
	m := &Module{Path: path, SHA256: sha, Manifest: manifest, Tools: manifest.Resolve(), rt: r,
		minBytes: mod.minBytes, egress: mod.egress, notes: mod.notes, hasInit: mod.hasInit, mem: owner.mem}
	m.newCode(nil)
	r.storeDescribe(m, raw)
	r.interpListed.Add(1)
	r.logger.Info("module listed from its describe on the interpreter; it compiles in the background",
		"file", path, "took", time.Since(start))
	if r.cfg.WarmUp {
		r.residents.WarmUp(m.code)
	}
	return m
}
