package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/toolhost/toolhost/abi"
	"github.com/toolhost/toolhost/internal/testkit/testwasm"
	"github.com/toolhost/toolhost/internal/wasmcheck"
)

// Every module make plugins built (make test builds them before go test)
// carries its embedded manifest, whatever its language: without one a
// cold start lists its tools only once it has compiled. (A merge once
// dropped the Rust rule's manifest embed.)
func TestMadePluginsEmbedTheirManifests(t *testing.T) {
	wasm, _ := filepath.Glob(filepath.Join(testwasm.Root(t), "plugins", "*.wasm"))
	if len(wasm) == 0 {
		if os.Getenv("CI") != "" {
			t.Fatal("plugins/ holds no modules: make test builds them before go test")
		}
		t.Skip("plugins/ holds no modules: run make plugins (make test does)")
	}
	for _, p := range wasm {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if _, ok, err := wasmcheck.CustomSection(b, abi.ManifestSection); err != nil || !ok {
			t.Errorf("%s: no %s section (%v): its make rule must run toolhost manifest embed", filepath.Base(p), abi.ManifestSection, err)
		}
	}
}
