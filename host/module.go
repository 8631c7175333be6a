package host

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/toolhost/toolhost/abi"
	"github.com/toolhost/toolhost/host/internal/membuf"
	"github.com/toolhost/toolhost/host/internal/resident"
	"github.com/toolhost/toolhost/host/internal/warm"
	"github.com/toolhost/toolhost/imports/extism"
	"github.com/toolhost/toolhost/imports/toolhostv1"
	"github.com/toolhost/toolhost/internal/wasmcheck"
	"github.com/toolhost/toolhost/third_party/wazero"
	"github.com/toolhost/toolhost/third_party/wazero/api"
)

// Module is a compiled, checked tool module and its manifest. It is
// immutable after Load and safe for concurrent use: every call gets its own
// instance.
type Module struct {
	// Path is the file the module came from.
	Path string
	// SHA256 is the hex digest of the module's bytes: its identity.
	SHA256 string
	// Manifest is what toolhost_describe returned.
	Manifest *abi.Manifest
	// Tools are the manifest's tools with defaults resolved.
	Tools []abi.Tool

	rt       *Runtime
	minBytes uint64 // linear memory at start
	notes    bool   // imports toolhost_v1.progress or log
	egress   bool   // imports toolhost_v1.http_request
	hasInit  bool   // exports _initialize

	code *resident.Code  // compiled code: maybe not yet, or released (resident.go)
	mem  *membuf.Pool    // linear memory for its instances
	snap *moduleSnapshot // nil unless Config.Snapshot names the module
	warm warm.ModState   // its warm instances' shared state; guarded by rt.warm

	// ext marks an Extism plugin (extism.go); nil for a toolhost ABI module.
	ext *extismPlugin

	// interpreted marks a module compiled on wazero's interpreter, for
	// the calls that come while its compile runs (interp.go); interp is
	// that module, when a tool module has one now; interpMaking is
	// closed when the form a call is making now is made or not.
	interpreted  bool
	interpMu     sync.Mutex
	interp       *interpForm
	interpMaking chan struct{}

	// claim is the manifest of the module's toolhost.manifest section
	// when it was listed from it (embedded.go), compact; verified is set
	// once its compile and describe agreed with it.
	claim    []byte
	verified atomic.Bool
}

// export is a function export the ABI requires, with its signature.
type export struct {
	name            string
	params, results []api.ValueType
}

// wantExports lists the functions the ABI requires of a tool module.
var wantExports = []export{
	{abi.ExportABIVersion, nil, []api.ValueType{api.ValueTypeI32}},
	{abi.ExportAlloc, []api.ValueType{api.ValueTypeI32}, []api.ValueType{api.ValueTypeI32}},
	{abi.ExportDescribe, nil, []api.ValueType{api.ValueTypeI64}},
	{abi.ExportCall, []api.ValueType{api.ValueTypeI32, api.ValueTypeI32, api.ValueTypeI32, api.ValueTypeI32}, []api.ValueType{api.ValueTypeI64}},
}

// providedImports are the import modules the host satisfies. Every module
// may import toolhost_v1 (governed egress); a module without a grant loads,
// and each request it makes is refused naming the missing grant.
var providedImports = []string{"wasi_snapshot_preview1", abi.ImportModule}

// LoadFile reads (see ReadModuleFile) and loads one module file. See Load.
func (r *Runtime) LoadFile(ctx context.Context, path string) (*Module, error) {
	wasm, err := ReadModuleFile(path)
	if err != nil {
		return nil, &LoadError{Path: path, Reason: "cannot read: " + err.Error(), Err: err}
	}
	return r.Load(ctx, path, wasm)
}

// Load compiles wasm (or takes it from the cache), checks its imports and
// exports against the ABI, and runs toolhost_describe in a fresh instance
// bounded by Config.DescribeTimeout. Every failure is a *LoadError naming
// path.
//
// With Config.Lazy, a module described before (its describe cache entry,
// by sha256, beside the compilation cache) or one that carries its
// manifest (the toolhost.manifest section) loads at once without
// compiling: its code compiles on its first call (or Module.Verify), and a
// section is checked then against what the module's describe returns.
// Compiled at load, a module whose section disagrees is refused.
func (r *Runtime) Load(ctx context.Context, path string, wasm []byte) (*Module, error) {
	return r.LoadHashed(ctx, path, wasm, sha256.Sum256(wasm))
}

// LoadHashed is Load for a caller that has hashed wasm already (a loader
// deciding whether a file changed): sum must be its SHA-256. A Go guest is
// megabytes, and hashing it again was a tenth of a start's CPU.
func (r *Runtime) LoadHashed(ctx context.Context, path string, wasm []byte, sum [sha256.Size]byte) (*Module, error) {
	r.settle.begin()
	defer r.settle.end()
	if r.cfg.Lazy {
		if m := r.cachedModule(path, hex.EncodeToString(sum[:])); m != nil {
			if r.cfg.WarmUp {
				r.residents.WarmUp(m.code)
			}
			return m, nil
		}
		m, sectioned := r.embeddedModule(path, wasm, hex.EncodeToString(sum[:]))
		if m != nil {
			return m, nil
		}
		if !sectioned { // a section that cannot be used: the compile says why
			if m := r.listInterpreted(ctx, path, wasm, sum); m != nil {
				return m, nil
			}
		}
	}
	m, err := r.compile(ctx, path, wasm, sum, wantExports, "")
	if err != nil {
		return nil, err
	}
	manifest, raw, err := m.describe(ctx)
	if err != nil {
		_ = m.Close(ctx)
		return nil, &LoadError{Path: path, Reason: err.Error(), Err: err}
	}
	if err := checkEmbedded(m, wasm, raw); err != nil {
		_ = m.Close(ctx)
		return nil, &LoadError{Path: path, Reason: err.(*ClaimError).Reason, Err: err}
	}
	m.Manifest = manifest
	m.Tools = manifest.Resolve()
	r.storeDescribe(m, raw)
	m.code.Loaded()
	return m, nil
}

// compile is the part of loading that every kind of module shares: the
// structural pre-check, compilation (or the cache), the import and export
// shape (exports: a tool module's or a planner's; shapeNote prefixes a
// shape complaint), and the memory floor against the limit. Every failure
// is a *LoadError naming path.
func (r *Runtime) compile(ctx context.Context, path string, wasm []byte, sum [sha256.Size]byte, exports []export, shapeNote string) (*Module, error) {
	return r.compileOn(ctx, path, wasm, sum, exports, shapeNote, nil)
}

// compileOn is compile, for the compiler (on nil) or, for a module m that
// runs interpreted while it compiles (interp.go), on the interpreter: the
// same checks of the bytes and of the compiled module, no compiler child
// and no file cache. The interpreted module shares m's memory pool.
func (r *Runtime) compileOn(ctx context.Context, path string, wasm []byte, sum [sha256.Size]byte, exports []export, shapeNote string, interpreting *Module) (*Module, error) {
	// Loads, compiles on demand and warm-up all come through here.
	r.settle.begin()
	defer r.settle.end()
	fail := func(err error, format string, args ...any) (*Module, error) {
		return nil, &LoadError{Path: path, Reason: fmt.Sprintf(format, args...), Err: err}
	}
	// Checked before wazero decodes it: a few hostile bytes can make its
	// decoder allocate without bound (see wasmcheck.Check).
	checked, err := wasmcheck.Check(wasm)
	if err != nil {
		return fail(err, "%v", err)
	}
	// Tens of thousands of data segments cost every instance: join them.
	checked = wasmcheck.CoalesceData(checked)
	var compiled wazero.CompiledModule
	if interpreting != nil {
		compiled, err = r.interp.compile(ctx, checked)
	} else {
		// In a child first, under a deadline and a memory limit: compiling
		// has neither in wazero, and a hostile module can make it take
		// minutes and gigabytes. The child fills the cache we then load from.
		if err := r.child.Compile(ctx, checked, sum); err != nil {
			return fail(err, "%v", err)
		}
		compiled, err = r.compileWasm(ctx, path, checked)
	}
	var cerr *CacheError
	if errors.As(err, &cerr) {
		return fail(err, "%v", err) // not the module's fault: do not call it invalid
	}
	if err != nil {
		return fail(err, "not a valid WebAssembly module: %v", err)
	}
	m := &Module{Path: path, SHA256: hex.EncodeToString(sum[:]), rt: r}
	if interpreting != nil {
		m.mem, m.interpreted = interpreting.mem, true
		m.code = r.interp.set.Code(compiled, nil)
	} else {
		r.compiles.Add(1)
		m.mem = membuf.NewPool(r.mem)
		m.newCode(compiled)
	}
	if shapeNote == "" { // a tool module (a planner is never an Extism plugin)
		ext, reason := extismShape(compiled)
		if reason != "" {
			_ = compiled.Close(ctx)
			return fail(nil, "%s", reason)
		}
		if m.ext = ext; ext != nil {
			exports = nil // its own exports, checked by extismShape
		}
	}
	// An Extism plugin may be a command: Extism runs its constructors
	// instead (extism.go), never _start.
	if m.ext == nil && hasExport(compiled, wasiStart) && !hasExport(compiled, abi.ExportInitialize) {
		_ = compiled.Close(ctx)
		ce := &CommandError{}
		return fail(ce, "%s%v", shapeNote, ce)
	}
	if reason := checkShape(compiled, exports); reason != "" {
		_ = compiled.Close(ctx)
		return fail(nil, "%s%s", shapeNote, reason)
	}
	m.minBytes = uint64(compiled.ExportedMemories()[abi.ExportMemory].Min()) * wasmPage
	m.notes = importsNotes(compiled)
	_, m.hasInit = compiled.ExportedFunctions()[abi.ExportInitialize]
	for _, imp := range compiled.ImportedFunctions() {
		// Only http_request reaches out: progress and log stay with the caller.
		if mod, name, _ := imp.Import(); (mod == abi.ImportModule || mod == extism.EnvModule) && name == abi.ImportHTTPRequest {
			m.egress = true
		}
	}
	if m.minBytes > r.cfg.Limits.MemoryBytes {
		_ = compiled.Close(ctx)
		return fail(nil, "needs %d bytes of memory at start, over the %d-byte limit", m.minBytes, r.cfg.Limits.MemoryBytes)
	}
	m.mem.SetWritten(dataWrites(checked, m.minBytes))
	return m, nil
}

// dataWrites is what instantiating checked (the bytes wazero compiled)
// writes from its data segments, for the memory pool to leave uncleared;
// nil when a segment lies past the minBytes the module starts with, since
// such an instantiation fails part way.
func dataWrites(checked []byte, minBytes uint64) []wasmcheck.Span {
	w := wasmcheck.DataWrites(checked)
	if len(w) > 0 && w[len(w)-1].End > minBytes {
		return nil
	}
	return w
}

// wasiStart is a WASI command's entry point, which toolhost never calls.
const wasiStart = "_start"

func hasExport(c wazero.CompiledModule, name string) bool {
	_, ok := c.ExportedFunctions()[name]
	return ok
}

// checkShape returns why the module's imports, memory or function exports
// (those listed: a tool module's or a planner's) break the ABI, or "" when
// they are fine.
func checkShape(c wazero.CompiledModule, exports []export) string {
	for _, imp := range c.ImportedFunctions() {
		mod, name, _ := imp.Import()
		if !slices.Contains(providedImports, mod) && !extism.Provides(mod) {
			return fmt.Sprintf("imports %s.%s, which the host does not provide (it provides %s)",
				mod, name, strings.Join(providedImports, ", "))
		}
	}
	if len(c.ImportedMemories()) > 0 {
		return "imports a memory; a tool module must define and export its own"
	}
	if _, ok := c.ExportedMemories()[abi.ExportMemory]; !ok {
		return `does not export its memory as "memory"`
	}
	fns := c.ExportedFunctions()
	for _, want := range exports {
		def, ok := fns[want.name]
		if !ok {
			return fmt.Sprintf("missing export %s (is this a toolhost ABI v%d module built as a reactor?)", want.name, abi.Version)
		}
		if !slices.Equal(def.ParamTypes(), want.params) || !slices.Equal(def.ResultTypes(), want.results) {
			return fmt.Sprintf("export %s has signature %s, want %s", want.name,
				signature(def.ParamTypes(), def.ResultTypes()), signature(want.params, want.results))
		}
	}
	if def, ok := fns[abi.ExportInitialize]; ok && (len(def.ParamTypes()) > 0 || len(def.ResultTypes()) > 0) {
		return "export _initialize must take and return nothing"
	}
	return ""
}

func signature(params, results []api.ValueType) string {
	names := func(ts []api.ValueType) string {
		s := make([]string, len(ts))
		for i, t := range ts {
			s[i] = api.ValueTypeName(t)
		}
		return strings.Join(s, ", ")
	}
	return "(" + names(params) + ") -> (" + names(results) + ")"
}

// describe checks the ABI version and reads the manifest, returning it
// parsed and as the guest wrote it.
func (m *Module) describe(ctx context.Context) (*abi.Manifest, []byte, error) {
	if m.ext != nil {
		return m.describeExtism(ctx)
	}
	var manifest *abi.Manifest
	var raw []byte
	err := m.atLoad(ctx, func(ctx context.Context, inst *instance) error {
		res, err := inst.mod.ExportedFunction(abi.ExportDescribe).Call(ctx)
		if err != nil {
			return m.loadFault(ctx, abi.ExportDescribe, err)
		}
		b, err := inst.read(res[0], m.rt.cfg.Limits.OutputBytes)
		if err != nil {
			return fmt.Errorf("%s: %w", abi.ExportDescribe, err)
		}
		raw = b
		manifest, err = abi.ParseManifest(b)
		return err
	})
	return manifest, raw, err
}

// atLoad runs the checks every module gets at load, in one fresh instance
// bounded by Config.DescribeTimeout with egress refused (there is no call
// yet): instantiation (and _initialize), then toolhost_abi_version. Then
// it runs more, if not nil, in the same instance.
func (m *Module) atLoad(ctx context.Context, more func(context.Context, *instance) error) error {
	ctx, cancel := context.WithTimeout(ctx, m.rt.cfg.DescribeTimeout)
	defer cancel()
	ctx = toolhostv1.WithCall(ctx, toolhostv1.Loading(moduleName(m.Path)))
	inst, err := m.instantiate(ctx, m.rt.cfg.Limits, discard{})
	if err != nil {
		// Instantiating also links imports and copies data segments: name
		// _initialize only when there is one to blame.
		during := "instantiating"
		if m.hasInit {
			during = abi.ExportInitialize
		}
		return m.loadFault(ctx, during, err)
	}
	defer func() {
		inst.close()
		// Its memory went to the module's pool: a module that is never
		// called must not keep megabytes for a call that may not come,
		// nor the code this instance ran.
		m.mem.Drop()
		m.idle()
	}()
	// New instances' memory is sized from what this one needed to start,
	// measured once here rather than grown page by page in every call.
	m.mem.SizeFrom(uint64(inst.mod.Memory().Size()))
	if m.ext != nil {
		return more(ctx, inst) // an Extism plugin has no ABI version
	}
	res, err := inst.mod.ExportedFunction(abi.ExportABIVersion).Call(ctx)
	if err != nil {
		return m.loadFault(ctx, abi.ExportABIVersion, err)
	}
	if v := int32(res[0]); v != abi.Version {
		return fmt.Errorf("ABI version %d, this host speaks version %d", v, abi.Version)
	}
	if more == nil {
		return nil
	}
	return more(ctx, inst)
}

func (m *Module) loadFault(ctx context.Context, fn string, err error) error {
	if ctx.Err() != nil {
		return fmt.Errorf("%s did not return within %v", fn, m.rt.cfg.DescribeTimeout)
	}
	return fmt.Errorf("%s failed: %w", fn, err)
}

// Close retires the module's warm instances (those in a call when it
// returns), releases the compiled code (once the instances made from it
// are closed) and refuses further calls. Calls in flight may fail.
func (m *Module) Close(ctx context.Context) error {
	m.rt.warm.CloseModule(m)
	m.mem.Drop() // no instance will take them (one closing now may still return its own)
	return m.code.Close(ctx)
}

// OpenWorld reports whether the module may reach beyond the host (MCP
// openWorldHint): the operator granted it egress to at least one host, and
// it imports the egress function http_request (progress and log, which
// reach only the caller, do not count). Without a grant it may still
// import it, but every request it makes is refused; without the import a
// grant gives it nothing to call.
func (m *Module) OpenWorld() bool {
	return m.egress && m.rt.grants.OpenWorld(moduleName(m.Path))
}

// moduleName is the file name egress grants are keyed by.
func moduleName(path string) string {
	if i := strings.LastIndexAny(path, `/\`); i >= 0 {
		return path[i+1:]
	}
	return path
}
