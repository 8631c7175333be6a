package loader

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/toolhost/toolhost/host"
	"github.com/toolhost/toolhost/internal/testkit/testwasm"
)

// nestedBlocks is a module of one function of n nested blocks: wazero's
// compile time grows with n² (100,000 took 2.5 minutes).
func nestedBlocks(n int) []byte {
	body := []byte{0}
	body = append(body, bytes.Repeat([]byte{0x02, 0x40}, n)...)
	body = append(body, bytes.Repeat([]byte{0x0b}, n+1)...)
	code := append([]byte{1}, leb(uint32(len(body)))...)
	code = append(code, body...)
	b := []byte("\x00asm\x01\x00\x00\x00")
	b = append(b, 1, 4, 1, 0x60, 0, 0, 3, 2, 1, 0, 10)
	b = append(b, leb(uint32(len(code)))...)
	return append(b, code...)
}

func leb(v uint32) []byte {
	var b []byte
	for ; v >= 0x80; v >>= 7 {
		b = append(b, byte(v)|0x80)
	}
	return append(b, byte(v))
}

// Issue 10 finding 5: a rescan compiles off the folder's lock, so shutdown
// (Close) does not wait for a compile bomb; before, the loader held its
// lock for the whole compile (2.5 minutes for this module) and blocked
// Close and every reload behind it. The compile itself ends at the host's
// compile limit, and what it compiled after Close is discarded.
func TestCloseDoesNotWaitForCompile(t *testing.T) {
	dir := t.TempDir()
	copyBytes(t, testwasm.WAT(t, "host/testdata/wat/echo.wat"), filepath.Join(dir, "echo.wasm"), nil)
	cfg := host.Config{CacheDir: t.TempDir(), Logger: discardLogger(),
		Compile: host.CompileLimits{Command: []string{os.Args[0]}, CPUTime: 500 * time.Millisecond}}
	reading := make(chan struct{})
	fsys := osFS
	fsys.readFile = func(p string) ([]byte, error) {
		if filepath.Base(p) == "bomb.wasm" {
			close(reading)
		}
		return host.ReadModuleFile(p)
	}
	l := openWith(t, cfg, dir, fsys)
	if err := os.WriteFile(filepath.Join(dir, "bomb.wasm"), nestedBlocks(100000), 0o644); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := l.Rescan(context.Background())
		done <- err
	}()
	<-reading // the rescan holds the lock only while it reads
	l.Close()
	select {
	case err := <-done:
		t.Fatalf("Close returned only after the rescan's compile ended (%v)", err)
	default:
	}
	if err := <-done; !errors.Is(err, ErrClosed) {
		t.Fatalf("rescan closed under it: %v; want ErrClosed", err)
	}
}
