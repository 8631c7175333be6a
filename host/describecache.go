package host

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/toolhost/toolhost/abi"
	"github.com/toolhost/toolhost/host/internal/membuf"
)

// describeFormat names the layout of a describe cache entry and what the
// host checked before writing one; a host that checks more bumps it, and
// the entries of older hosts are never read.
const describeFormat = 1

// maxDescribeEntry bounds what is read of one entry: a manifest is at most
// the output cap, and an entry is read before anything is known of it.
const maxDescribeEntry = 16 << 20

// describeEntry is what a restart needs to list a module's tools and to
// refuse a call it could not run, without compiling or instantiating it:
// the manifest as toolhost_describe returned it and the facts the host
// took from the compiled module. Sum covers every other field, so a
// damaged entry is told from a good one.
type describeEntry struct {
	Format   int    `json:"format"`
	SHA256   string `json:"sha256"`
	MinBytes uint64 `json:"min_bytes"`
	Egress   bool   `json:"imports_egress"`
	Notes    bool   `json:"imports_notes"`
	Init     bool   `json:"has_initialize"`
	// Extism is an Extism plugin's hyper-mcp interface version (0: a
	// toolhost ABI module); Ctors that it is a WASI command (extism.go).
	Extism   int    `json:"extism,omitempty"`
	Ctors    bool   `json:"extism_ctors,omitempty"`
	Manifest []byte `json:"manifest"`
	Sum      string `json:"sum"`
}

func (e *describeEntry) sum() string {
	h := sha256.New()
	fmt.Fprintf(h, "%d\x00%s\x00%d\x00%t\x00%t\x00%t\x00", e.Format, e.SHA256, e.MinBytes, e.Egress, e.Notes, e.Init)
	if e.Extism != 0 { // only then: the entries of toolhost ABI modules keep their sums
		fmt.Fprintf(h, "extism%d\x00%t\x00", e.Extism, e.Ctors)
	}
	h.Write(e.Manifest)
	return hex.EncodeToString(h.Sum(nil))
}

// describePath is where the entry of the module whose sha256 is sha lives,
// or "" when there is no file cache.
func (r *Runtime) describePath(sha string) string {
	if r.cacheDir == "" {
		return ""
	}
	return filepath.Join(r.cacheDir, fmt.Sprintf("describe-v%d", describeFormat), sha+".json")
}

// cachedModule returns the module whose sha256 is sha as its describe
// cache entry has it, uncompiled, or nil when there is no usable entry.
// The cache is input from disk like any other: an entry that cannot be
// read, does not parse, fails its sum, names another module or holds a
// manifest the host would refuse is deleted and ignored, and the module is
// described afresh.
func (r *Runtime) cachedModule(path, sha string) *Module {
	p := r.describePath(sha)
	if p == "" {
		return nil
	}
	e, err := readDescribeEntry(p, sha)
	if os.IsNotExist(err) {
		return nil
	}
	var manifest *abi.Manifest
	if err == nil {
		manifest, err = abi.ParseManifest(e.Manifest)
	}
	if err == nil && e.MinBytes > r.cfg.Limits.MemoryBytes {
		err = fmt.Errorf("needs %d bytes of memory, over the limit: described afresh for the real error", e.MinBytes)
	}
	if err != nil {
		r.logger.Warn("describe cache: ignoring an entry that cannot be used; describing the module again",
			"file", path, "entry", p, "err", err)
		_ = os.Remove(p)
		return nil
	}
	r.describeHits.Add(1)
	// Its memory pool learns no size (that takes an instance): its
	// instances grow their memory from the module's minimum.
	m := &Module{Path: path, SHA256: sha, Manifest: manifest, Tools: manifest.Resolve(), rt: r,
		minBytes: e.MinBytes, egress: e.Egress, notes: e.Notes, hasInit: e.Init, mem: membuf.NewPool(r.mem),
		ext: extismFromEntry(e.Extism, e.Ctors)}
	m.newCode(nil)
	return m
}

func readDescribeEntry(p, sha string) (*describeEntry, error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxDescribeEntry+1))
	if err != nil {
		return nil, err
	}
	if len(b) > maxDescribeEntry {
		return nil, fmt.Errorf("over %d bytes", maxDescribeEntry)
	}
	var e describeEntry
	if err := json.Unmarshal(b, &e); err != nil {
		return nil, err
	}
	switch {
	case e.Format != describeFormat:
		return nil, fmt.Errorf("format %d, want %d", e.Format, describeFormat)
	case e.SHA256 != sha:
		return nil, fmt.Errorf("holds module %s", e.SHA256)
	case e.Sum != e.sum():
		return nil, fmt.Errorf("checksum mismatch")
	}
	return &e, nil
}

// storeDescribe records a module that loaded, for the next start. A cache
// that cannot be written only costs that start a describe: it is logged,
// never an error.
func (r *Runtime) storeDescribe(m *Module, manifest []byte) {
	p := r.describePath(m.SHA256)
	if p == "" {
		return
	}
	e := &describeEntry{Format: describeFormat, SHA256: m.SHA256, MinBytes: m.minBytes,
		Egress: m.egress, Notes: m.notes, Init: m.hasInit, Manifest: manifest}
	if m.ext != nil {
		e.Extism, e.Ctors = m.ext.iface.Version, m.ext.ctors
	}
	e.Sum = e.sum()
	b, err := json.Marshal(e)
	if err == nil {
		err = writeAtomic(p, b)
	}
	if err != nil {
		r.logger.Warn("describe cache: cannot write an entry; the next start describes the module again",
			"file", m.Path, "err", err)
	}
}

// dropDescribe deletes the entry of the module whose sha256 is sha: the
// compiled module contradicted it.
func (r *Runtime) dropDescribe(sha string) {
	if p := r.describePath(sha); p != "" {
		_ = os.Remove(p)
	}
}

// writeAtomic writes b to p through a temporary file and a rename, so a
// reader never sees half an entry.
func writeAtomic(p string, b []byte) error {
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		return err
	}
	f, err := os.CreateTemp(filepath.Dir(p), ".entry-*")
	if err != nil {
		return err
	}
	_, err = f.Write(b)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), p)
	}
	if err != nil {
		_ = os.Remove(f.Name())
	}
	return err
}

// Listable reports whether Load would list the module whose sha256 is sha
// (its bytes wasm, if the caller has them) at once, without compiling it:
// the runtime is lazy (Config.Lazy) and it has a describe cache entry or a
// toolhost.manifest section. An entry or section found unusable when Load
// reads it only means that Load compiles after all.
func (r *Runtime) Listable(sha string, wasm []byte) bool {
	if !r.cfg.Lazy {
		return false
	}
	if _, ok, err := readEmbedded(wasm); ok && err == nil {
		return true
	}
	p := r.describePath(sha)
	if p == "" {
		return false
	}
	_, err := os.Stat(p)
	return err == nil
}
