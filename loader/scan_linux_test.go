//go:build linux

package loader_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/toolhost/toolhost/internal/testkit/testwasm"
	"github.com/toolhost/toolhost/loader"
)

// exhaustFDs lowers the soft limit on open files to the descriptors in use
// and fills every hole below it, so the next open fails with EMFILE, as
// on a server whose clients hold every descriptor. The returned func
// restores both.
func exhaustFDs(t *testing.T) (restore func()) {
	t.Helper()
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		t.Skip(err)
	}
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skip(err)
	}
	top := 0
	for _, e := range ents {
		if n, err := strconv.Atoi(e.Name()); err == nil {
			top = max(top, n)
		}
	}
	low := lim
	low.Cur = uint64(top + 1)
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &low); err != nil {
		t.Skip(err)
	}
	var held []*os.File
	for {
		f, err := os.Open(os.DevNull)
		if errors.Is(err, syscall.EMFILE) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, f)
	}
	return func() {
		for _, f := range held {
			f.Close()
		}
		if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
			t.Fatal(err)
		}
	}
}

// Issue 10 finding 3: out of file descriptors, the folder cannot be
// listed. The rescan says so and every tool keeps serving; filepath.Glob
// read the unlistable folder as an empty one, and every tool vanished.
func TestRescanUnlistableFolderKeepsTools(t *testing.T) {
	ctx := context.Background()
	dir := testwasm.Dir(t, testwasm.WAT(t, "host/testdata/wat/echo.wat"))
	live, err := loader.Open(ctx, newRuntime(t), dir, loader.Options{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	restore := exhaustFDs(t)
	ch, err := live.Rescan(ctx)
	restore()
	var se *loader.ScanError
	if !errors.As(err, &se) || !errors.Is(err, syscall.EMFILE) {
		t.Fatalf("rescan out of descriptors: %v; want a ScanError with EMFILE", err)
	}
	if _, ok := live.Lookup("wat.echo"); !ok || len(ch.Removed) != 0 {
		t.Fatalf("after a failed listing: change %+v; want every tool kept", ch)
	}
	if ch, err := live.Rescan(ctx); err != nil || !ch.Empty() {
		t.Fatalf("rescan once descriptors are back: %+v, %v", ch, err)
	}
}

// Issue 10 finding 15: a FIFO named *.wasm blocked the loader forever (and
// shutdown behind its lock); a symlink to /dev/zero read without end. Only
// regular files are read, after resolving symlinks, and never past
// host.MaxModuleBytes; each other file is refused once, by name, and the
// folder keeps loading.
func TestLoadRefusesNonRegularFiles(t *testing.T) {
	ctx := context.Background()
	dir := testwasm.Dir(t, testwasm.WAT(t, "host/testdata/wat/echo.wat"))
	if err := syscall.Mkfifo(filepath.Join(dir, "fifo.wasm"), 0o644); err != nil {
		t.Skip(err)
	}
	if err := os.Symlink("/dev/zero", filepath.Join(dir, "zero.wasm")); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "dir.wasm"), 0o755); err != nil {
		t.Fatal(err)
	}
	big, err := os.Create(filepath.Join(dir, "big.wasm"))
	if err != nil {
		t.Fatal(err)
	}
	if err := big.Truncate(1 << 40); err != nil { // sparse: no disk used
		t.Fatal(err)
	}
	big.Close()
	res, err := loader.Load(ctx, newRuntime(t), dir, loader.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := res.Registry.Lookup("wat.echo"); !ok {
		t.Fatal("wat.echo not served beside the refused files")
	}
	reasons := map[string]string{}
	for _, e := range res.Errors {
		reasons[filepath.Base(e.Path)] = e.Reason
	}
	for file, want := range map[string]string{"fifo.wasm": "FIFO", "zero.wasm": "device",
		"dir.wasm": "directory", "big.wasm": "over the"} {
		if !strings.Contains(reasons[file], want) {
			t.Errorf("%s refused for %q; want it to say %q", file, reasons[file], want)
		}
	}
	// Refused once: the next rescan neither reads them nor complains again.
	if ch, err := res.Live.Rescan(ctx); err != nil || !ch.Empty() {
		t.Fatalf("second rescan: %+v, %v", ch, err)
	}
	res.Live.Close() // returns: nothing holds the folder's lock
}
