package host

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/toolhost/toolhost/abi"
	"github.com/toolhost/toolhost/host/internal/membuf"
	"github.com/toolhost/toolhost/internal/wasmcheck"
)

// embedFormat names the layout of the toolhost.manifest section
// (docs/ABI.md); a host reads only the formats it knows and compiles a
// module with another one as if it had none.
const embedFormat = 1

// embedded is the payload of a module's toolhost.manifest section: what
// its toolhost_describe returns and the facts the host otherwise takes
// from its compiled code, the same a describe cache entry holds. Nothing
// in it is trusted: it lists the module's tools before it compiles, and
// the compile checks every field before a call runs.
type embedded struct {
	Format   int             `json:"format"`
	Manifest json.RawMessage `json:"manifest"`
	MinBytes uint64          `json:"min_bytes"`
	Egress   bool            `json:"imports_egress"`
	Notes    bool            `json:"imports_notes"`
	Init     bool            `json:"has_initialize"`
}

// ClaimError is a module whose toolhost.manifest section says what its
// compiled code does not: other tools than its toolhost_describe returns,
// other imports or memory, or code that does not compile at all. The
// module is refused.
type ClaimError struct {
	// Path is the module file.
	Path string
	// Reason says what differs, and how to fix it.
	Reason string
}

func (e *ClaimError) Error() string { return e.Path + ": " + e.Reason }

// readEmbedded returns the module's toolhost.manifest section, decoded;
// false when it has none.
func readEmbedded(wasm []byte) (*embedded, bool, error) {
	payload, ok, err := wasmcheck.CustomSection(wasm, abi.ManifestSection)
	if err != nil || !ok {
		return nil, false, err
	}
	var e embedded
	if err := json.Unmarshal(payload, &e); err != nil {
		return nil, true, fmt.Errorf("%s section: %v", abi.ManifestSection, err)
	}
	if e.Format != embedFormat {
		return nil, true, fmt.Errorf("%s section: format %d, this host reads format %d", abi.ManifestSection, e.Format, embedFormat)
	}
	return &e, true, nil
}

// embeddedModule returns the module as its toolhost.manifest section
// describes it, uncompiled, or nil when it has no usable section (it is
// then compiled and described, and a section that cannot be used refuses
// it there with the reason: see checkEmbedded). sectioned says whether it
// has a section at all, usable or not.
func (r *Runtime) embeddedModule(path string, wasm []byte, sha string) (m *Module, sectioned bool) {
	e, ok, err := readEmbedded(wasm)
	if !ok {
		return nil, false
	}
	var manifest *abi.Manifest
	if err == nil {
		manifest, err = abi.ParseManifest(e.Manifest)
	}
	if err == nil && e.MinBytes > r.cfg.Limits.MemoryBytes {
		err = fmt.Errorf("needs %d bytes of memory, over the limit", e.MinBytes)
	}
	if err != nil {
		r.logger.Warn("the module's embedded manifest cannot be used; compiling it to say why", "file", path, "err", err)
		return nil, true
	}
	m = &Module{Path: path, SHA256: sha, Manifest: manifest, Tools: manifest.Resolve(), rt: r,
		minBytes: e.MinBytes, egress: e.Egress, notes: e.Notes, hasInit: e.Init, mem: membuf.NewPool(r.mem),
		claim: compactJSON(e.Manifest)}
	m.newCode(nil)
	return m, true
}

// checkEmbedded compares the toolhost.manifest section of wasm, if it has
// one, with what compiling (m's facts) and describing (raw) the module
// found: a section must say exactly that. Nil when there is no section or
// it agrees.
func checkEmbedded(m *Module, wasm, raw []byte) error {
	e, ok, err := readEmbedded(wasm)
	if !ok && err == nil {
		return nil
	}
	if err != nil {
		return &ClaimError{Path: m.Path, Reason: err.Error() + embedHint}
	}
	claimed := &Module{Path: m.Path, minBytes: e.MinBytes, egress: e.Egress, notes: e.Notes, hasInit: e.Init, claim: compactJSON(e.Manifest)}
	if err := claimed.differs(m); err != nil {
		return err
	}
	return claimed.claimDiffers(raw)
}

const embedHint = " (embed it again: toolhost manifest embed FILE.wasm)"

// differs says how the facts m claims differ from those compiled found.
func (m *Module) differs(compiled *Module) error {
	var diffs []string
	if m.minBytes != compiled.minBytes {
		diffs = append(diffs, fmt.Sprintf("min_bytes %d where the code has %d", m.minBytes, compiled.minBytes))
	}
	if m.egress != compiled.egress {
		diffs = append(diffs, fmt.Sprintf("imports_egress %t where the code has %t", m.egress, compiled.egress))
	}
	if m.notes != compiled.notes {
		diffs = append(diffs, fmt.Sprintf("imports_notes %t where the code has %t", m.notes, compiled.notes))
	}
	if m.hasInit != compiled.hasInit {
		diffs = append(diffs, fmt.Sprintf("has_initialize %t where the code has %t", m.hasInit, compiled.hasInit))
	}
	if len(diffs) == 0 {
		return nil
	}
	return &ClaimError{Path: m.Path, Reason: fmt.Sprintf("its %s section does not match its code: %s%s", abi.ManifestSection, strings.Join(diffs, ", "), embedHint)}
}

// claimDiffers says how the manifest m claims differs from raw, what its
// toolhost_describe returned.
func (m *Module) claimDiffers(raw []byte) error {
	if bytes.Equal(m.claim, compactJSON(raw)) {
		return nil
	}
	reason := "the manifests differ"
	if a, b := toolNames(m.claim), toolNames(raw); !slices.Equal(a, b) {
		reason = fmt.Sprintf("it lists tools [%s], toolhost_describe returns [%s]", strings.Join(a, " "), strings.Join(b, " "))
	}
	return &ClaimError{Path: m.Path, Reason: fmt.Sprintf("its %s section does not match what its toolhost_describe returns: %s%s", abi.ManifestSection, reason, embedHint)}
}

func toolNames(manifest []byte) []string {
	var doc struct {
		Tools []struct {
			Name string `json:"name"`
		} `json:"tools"`
	}
	_ = json.Unmarshal(manifest, &doc)
	names := make([]string, len(doc.Tools))
	for i, t := range doc.Tools {
		names[i] = t.Name
	}
	return names
}

// compactJSON is b without insignificant space (b itself when it is not
// JSON: then it matches nothing that is).
func compactJSON(b []byte) []byte {
	var out bytes.Buffer
	if err := json.Compact(&out, b); err != nil {
		return b
	}
	return out.Bytes()
}

// verifyClaim runs fresh's describe, the module compiled for m, and
// checks m's claims (its section) against it; on agreement the describe
// cache learns the module, so that the next start lists it from there.
func (m *Module) verifyClaim(ctx context.Context, fresh *Module) error {
	if err := m.differs(fresh); err != nil {
		return err
	}
	_, raw, err := fresh.describe(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return err
		}
		return &ClaimError{Path: m.Path, Reason: err.Error()}
	}
	if err := m.claimDiffers(raw); err != nil {
		return err
	}
	m.verified.Store(true)
	m.rt.storeDescribe(m, raw)
	return nil
}

// Unverified reports whether the module was listed from its
// toolhost.manifest section and has not compiled yet: its code may still
// be refused (Verify).
func (m *Module) Unverified() bool { return m.claim != nil && !m.verified.Load() }

// Verify compiles the module if it is not resident (joining a compile in
// progress) and, for a module listed from its toolhost.manifest section,
// checks the section against the compiled code and its describe. A
// *ClaimError is the verdict that the module cannot be served; other
// errors (ctx ending, the file changing, the cache) say nothing of it.
// It is background work: it waits while a call waits for a compile, and a
// compile it started stops for a call's and starts again after it.
func (m *Module) Verify(ctx context.Context) error {
	if _, err := m.code.AcquireBackground(ctx); err != nil {
		return err
	}
	m.releaseCode()
	return nil
}

// claimVerdict turns an unverified module's failure to compile into the
// refusal it is (a *ClaimError), or returns err as it is when it says
// nothing of the module: ctx ended, the file changed, the cache failed.
func claimVerdict(ctx context.Context, m *Module, err error) error {
	var ce *ClaimError
	var cache *CacheError
	var le *LoadError
	switch {
	case errors.As(err, &ce), ctx.Err() != nil, errors.As(err, &cache):
		return err
	case errors.As(err, &le):
		return &ClaimError{Path: m.Path, Reason: le.Reason}
	}
	return err
}

// EmbedManifest compiles and describes wasm as a load does and returns
// its bytes with a toolhost.manifest section that says what it found (in
// place of any it had). The code is unchanged; the file's sha256, its
// version, is not.
func (r *Runtime) EmbedManifest(ctx context.Context, path string, wasm []byte) ([]byte, error) {
	base, err := wasmcheck.WithoutCustomSection(wasm, abi.ManifestSection)
	if err != nil {
		return nil, &LoadError{Path: path, Reason: err.Error(), Err: err}
	}
	m, err := r.compile(ctx, path, base, sha256.Sum256(base), wantExports, "")
	if err != nil {
		return nil, err
	}
	defer m.Close(ctx)
	_, raw, err := m.describe(ctx)
	if err != nil {
		return nil, &LoadError{Path: path, Reason: err.Error(), Err: err}
	}
	payload, err := json.Marshal(&embedded{Format: embedFormat, Manifest: compactJSON(raw),
		MinBytes: m.minBytes, Egress: m.egress, Notes: m.notes, Init: m.hasInit})
	if err != nil {
		return nil, err
	}
	return wasmcheck.WithCustomSection(wasm, abi.ManifestSection, payload)
}
