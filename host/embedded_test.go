package host_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolhost/toolhost/abi"
	"github.com/toolhost/toolhost/host"
	"github.com/toolhost/toolhost/internal/wasmcheck"
)

// embeddedEcho writes the echo fixture, with its manifest embedded by
// EmbedManifest, into a folder of its own; edit, if not nil, rewrites the
// section's payload first (a section that lies).
func embeddedEcho(t *testing.T, edit func(map[string]any)) string {
	t.Helper()
	return embedded(t, "echo", edit)
}

// embedded is embeddedEcho for the fixture testdata/wat/NAME.wat.
func embedded(t *testing.T, name string, edit func(map[string]any)) string {
	t.Helper()
	return embeddedFile(t, watPath(t, name), name+".wasm", edit)
}

// embeddedFile is embeddedEcho for the module at path, written as file.
func embeddedFile(t *testing.T, path, file string, edit func(map[string]any)) string {
	t.Helper()
	wasm, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// The shared cache: what EmbedManifest compiles is the module
	// without its section, never the file the tests load.
	out, err := newRuntime(t, host.Config{}).EmbedManifest(context.Background(), file, wasm)
	if err != nil {
		t.Fatal(err)
	}
	if edit != nil {
		payload, ok, err := wasmcheck.CustomSection(out, abi.ManifestSection)
		if err != nil || !ok {
			t.Fatalf("no section after EmbedManifest: %v", err)
		}
		var doc map[string]any
		if err := json.Unmarshal(payload, &doc); err != nil {
			t.Fatal(err)
		}
		edit(doc)
		b, _ := json.Marshal(doc)
		if out, err = wasmcheck.WithCustomSection(out, abi.ManifestSection, b); err != nil {
			t.Fatal(err)
		}
	}
	p := filepath.Join(t.TempDir(), file)
	if err := os.WriteFile(p, out, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// A lazy runtime with an empty cache lists a module that carries its
// manifest without compiling it; Verify compiles it, finds the section
// true and records the module in the describe cache; a call then runs.
func TestEmbeddedManifestListsBeforeCompiling(t *testing.T) {
	path := embeddedEcho(t, nil)
	cache := t.TempDir()
	rt := newRuntime(t, host.Config{CacheDir: cache, Lazy: true})
	m, err := rt.LoadFile(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	if s := rt.ModuleStats(); s.Compiles != 0 || m.Resident() || !m.Unverified() {
		t.Fatalf("load: %+v, resident %v, unverified %v; want nothing compiled, listed from the section", s, m.Resident(), m.Unverified())
	}
	if len(m.Tools) != 1 || m.Tools[0].Name != "wat.echo" {
		t.Fatalf("tools %+v; want wat.echo", m.Tools)
	}
	if err := m.Verify(context.Background()); err != nil {
		t.Fatal(err)
	}
	if m.Unverified() || rt.ModuleStats().Compiles != 1 {
		t.Fatalf("after Verify: unverified %v, %+v", m.Unverified(), rt.ModuleStats())
	}
	out, err := m.Do(context.Background(), host.Request{Tool: "wat.echo", Args: json.RawMessage(`{"a":1}`)})
	if err != nil || string(out) != `{"a":1}` {
		t.Fatalf("call: %s, %v", out, err)
	}
	// The next start lists it from the describe cache, checked.
	rt2 := newRuntime(t, host.Config{CacheDir: cache, Lazy: true})
	m2, err := rt2.LoadFile(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	if s := rt2.ModuleStats(); s.DescribeHits != 1 || m2.Unverified() {
		t.Fatalf("restart: %+v, unverified %v; want a describe cache hit", s, m2.Unverified())
	}
}

// A section that names other tools than the module's describe returns
// lists them until the module compiles; then Verify, and every call, is
// refused with a *ClaimError naming both lists. Loaded eagerly (and so by
// inspect), the module is refused at load with that reason.
func TestEmbeddedManifestThatLiesIsRefused(t *testing.T) {
	path := embeddedEcho(t, func(doc map[string]any) {
		doc["manifest"].(map[string]any)["tools"].([]any)[0].(map[string]any)["name"] = "wat.other"
	})
	rt := newRuntime(t, host.Config{CacheDir: t.TempDir(), Lazy: true})
	m, err := rt.LoadFile(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	if m.Tools[0].Name != "wat.other" {
		t.Fatalf("listed %+v; want the section's tool", m.Tools)
	}
	err = m.Verify(context.Background())
	var ce *host.ClaimError
	if !errors.As(err, &ce) || !strings.Contains(ce.Reason, "[wat.other]") || !strings.Contains(ce.Reason, "[wat.echo]") {
		t.Fatalf("Verify: %v; want a ClaimError naming both tool lists", err)
	}
	if _, err := m.Do(context.Background(), host.Request{Tool: "wat.other", Args: json.RawMessage(`{}`)}); err == nil || !strings.Contains(err.Error(), "does not match") {
		t.Fatalf("call after the refusal: %v", err)
	}
	if n := rt.ModuleStats().Compiles; n != 1 {
		t.Fatalf("%d compiles; a refused module is not compiled again for each call", n)
	}
	eager := newRuntime(t, host.Config{CacheDir: t.TempDir()})
	_, err = eager.LoadFile(context.Background(), path)
	var le *host.LoadError
	if !errors.As(err, &le) || !strings.Contains(le.Reason, abi.ManifestSection+" section does not match") {
		t.Fatalf("eager load: %v; want the mismatch as the load error", err)
	}
}

// A section whose facts lie (no memory needed at start, say) is refused
// at its compile, before any call runs.
func TestEmbeddedManifestFactsChecked(t *testing.T) {
	path := embeddedEcho(t, func(doc map[string]any) { doc["min_bytes"] = 0 })
	rt := newRuntime(t, host.Config{CacheDir: t.TempDir(), Lazy: true})
	m, err := rt.LoadFile(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	var ce *host.ClaimError
	if err := m.Verify(context.Background()); !errors.As(err, &ce) || !strings.Contains(ce.Reason, "min_bytes 0 where the code has 65536") {
		t.Fatalf("Verify: %v", err)
	}
}
