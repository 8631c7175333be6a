//go:build linux

package host_test

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/toolhost/toolhost/host"
)

// Issue 10 finding 13: on a full disk a module that compiled was refused
// because its cache entry could not be written. Now it is served from
// memory, with a warning. The disk is a tiny tmpfs filled to the brim.
func TestFullCacheDiskStillLoads(t *testing.T) {
	dir := t.TempDir()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size=64k"); err != nil {
		t.Skipf("cannot mount a tmpfs here: %v", err)
	}
	t.Cleanup(func() { _ = syscall.Unmount(dir, 0) })
	var log syncBuffer
	rt := newRuntime(t, host.Config{CacheDir: dir, Logger: slog.New(slog.NewTextHandler(&log, nil))})
	filler, err := os.Create(filepath.Join(dir, "filler"))
	if err != nil {
		t.Fatal(err)
	}
	chunk := make([]byte, 4096)
	for {
		if _, err := filler.Write(chunk); err != nil {
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatal(err)
			}
			break
		}
	}
	filler.Close()
	m, err := rt.LoadFile(context.Background(), watPath(t, "echo"))
	if err != nil {
		t.Fatalf("load with a full cache disk: %v", err)
	}
	m.Close(context.Background())
	if !strings.Contains(log.String(), "cannot be read or written") {
		t.Fatalf("no warning that the cache was bypassed; log:\n%s", log.String())
	}
}
