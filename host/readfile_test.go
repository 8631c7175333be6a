package host_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/toolhost/toolhost/host"
)

// TestReadModuleFileReadsOnce: a module file is read whole into one buffer
// sized from its stat; growing a buffer from 512 bytes copied a Go guest's
// megabytes a dozen times on every start.
func TestReadModuleFileReadsOnce(t *testing.T) {
	want := bytes.Repeat([]byte("\x00asm toolhost "), 300_000) // ~4 MiB, a Go guest's size
	path := filepath.Join(t.TempDir(), "m.wasm")
	if err := os.WriteFile(path, want, 0o644); err != nil {
		t.Fatal(err)
	}
	var got []byte
	allocs := testing.AllocsPerRun(3, func() {
		var err error
		if got, err = host.ReadModuleFile(path); err != nil {
			t.Fatal(err)
		}
	})
	if !bytes.Equal(got, want) {
		t.Fatalf("read %d bytes, not the file's %d", len(got), len(want))
	}
	// The open file, its stat, the buffer and its header: no growth.
	if allocs > 8 {
		t.Fatalf("%v allocations to read one file; want the buffer allocated once", allocs)
	}
}
