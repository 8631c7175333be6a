package host_test

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/toolhost/toolhost/host"
)

// cachedEcho compiles the echo fixture into a cache of the test's own and
// returns the cache folder and the path of its one entry.
func cachedEcho(t *testing.T) (dir, entry string) {
	t.Helper()
	dir = t.TempDir()
	rt := newRuntime(t, host.Config{CacheDir: dir})
	m, err := rt.LoadFile(context.Background(), watPath(t, "echo"))
	if err != nil {
		t.Fatal(err)
	}
	m.Close(context.Background())
	entries, _ := filepath.Glob(filepath.Join(dir, "wazero-*", strings.Repeat("?", 64)))
	if len(entries) != 1 {
		t.Fatalf("cache entries %v; want one", entries)
	}
	return dir, entries[0]
}

// entryLayout returns where an entry's function count and code lie
// (the fork of wazero v1.12: magic, version, count, offsets, code length,
// zeros up to a 64 KiB offset, code, crc).
func entryLayout(t *testing.T, b []byte) (countAt, codeAt, codeLen int) {
	t.Helper()
	const align = 64 << 10
	countAt = 7 + int(b[6])
	n := int(binary.LittleEndian.Uint32(b[countAt:]))
	lenAt := countAt + 4 + 8*n
	codeAt = (lenAt + 8 + align - 1) / align * align
	return countAt, codeAt, int(binary.LittleEndian.Uint64(b[lenAt:]))
}

// Issue 10 finding 13: a damaged cache entry is deleted and its module
// compiled again, never refused and never a crash. Before, a changed
// function count made wazero allocate by it ("fatal error: out of
// memory" at every start), and a flipped or truncated entry refused the
// module for good.
func TestDamagedCacheEntryIsRecompiled(t *testing.T) {
	for name, damage := range map[string]func(t *testing.T, b []byte) []byte{
		"function count": func(t *testing.T, b []byte) []byte {
			at, _, _ := entryLayout(t, b)
			binary.LittleEndian.PutUint32(b[at:], 0xFFFFFFF0)
			return b
		},
		"flipped code byte": func(t *testing.T, b []byte) []byte {
			_, at, n := entryLayout(t, b)
			b[at+n/2] ^= 0x40
			return b
		},
		"truncated": func(t *testing.T, b []byte) []byte { return b[:len(b)/2] },
	} {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			dir, entry := cachedEcho(t)
			b, err := os.ReadFile(entry)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(entry, damage(t, b), 0o644); err != nil {
				t.Fatal(err)
			}
			var log syncBuffer
			rt := newRuntime(t, host.Config{CacheDir: dir, Logger: slog.New(slog.NewTextHandler(&log, nil))})
			m, err := rt.LoadFile(ctx, watPath(t, "echo"))
			if err != nil {
				t.Fatalf("load with a damaged cache entry: %v", err)
			}
			defer m.Close(ctx)
			if res, err := m.Call(ctx, "wat.echo", json.RawMessage(`{"a":1}`), host.Limits{}); err != nil || string(res) != `{"a":1}` {
				t.Fatalf("call: %s, %v", res, err)
			}
			if !strings.Contains(log.String(), "compilation cache") {
				t.Errorf("no warning about the damaged entry; log:\n%s", log.String())
			}
			// The entry was written again, whole: the next start takes it
			// from the cache without a complaint.
			var log2 syncBuffer
			rt2 := newRuntime(t, host.Config{CacheDir: dir, Logger: slog.New(slog.NewTextHandler(&log2, nil))})
			before, _ := rt2.CacheEntries()
			m2, err := rt2.LoadFile(ctx, watPath(t, "echo"))
			if err != nil {
				t.Fatal(err)
			}
			m2.Close(ctx)
			if after, _ := rt2.CacheEntries(); after != before || log2.String() != "" {
				t.Fatalf("restart after the repair: entries %d -> %d, log %q; want a clean cache hit", before, after, log2.String())
			}
		})
	}
}

// A healthy entry passes the guard: a restart takes it from the cache
// without deleting or rewriting it (this is also what fails first if a
// wazero upgrade changes the entry layout the guard checks).
func TestHealthyCacheEntryIsKept(t *testing.T) {
	dir, entry := cachedEcho(t)
	fi, _ := os.Stat(entry)
	var log syncBuffer
	rt := newRuntime(t, host.Config{CacheDir: dir, Logger: slog.New(slog.NewTextHandler(&log, nil))})
	m, err := rt.LoadFile(context.Background(), watPath(t, "echo"))
	if err != nil {
		t.Fatal(err)
	}
	m.Close(context.Background())
	fi2, err := os.Stat(entry)
	if err != nil || !fi2.ModTime().Equal(fi.ModTime()) || log.String() != "" {
		t.Fatalf("healthy entry: %v, log %q; want it kept as it was", err, log.String())
	}
}

// Issue 10 finding 16: a cache that cannot be used is named as the fault,
// never reported as "not a valid WebAssembly module".
func TestUnusableCacheIsNotAnInvalidModule(t *testing.T) {
	dir, entry := cachedEcho(t)
	// An entry wazero cannot read and the guard cannot delete.
	if err := os.Remove(entry); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(entry, "x"), 0o755); err != nil {
		t.Fatal(err)
	}
	rt := newRuntime(t, host.Config{CacheDir: dir})
	_, err := rt.LoadFile(context.Background(), watPath(t, "echo"))
	var le *host.LoadError
	var ce *host.CacheError
	if err == nil || !errors.As(err, &le) || !errors.As(err, &ce) ||
		strings.Contains(le.Reason, "not a valid WebAssembly module") || !strings.Contains(le.Reason, "compilation cache") {
		t.Fatalf("load with an unusable cache: %v; want a CacheError naming the cache", err)
	}
}

// A cache folder that cannot be created is bypassed with a warning rather
// than refusing to start.
func TestUncreatableCacheIsBypassed(t *testing.T) {
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	var log syncBuffer
	rt := newRuntime(t, host.Config{CacheDir: filepath.Join(file, "cache"), Logger: slog.New(slog.NewTextHandler(&log, nil))})
	if _, ok := rt.CacheEntries(); ok || !strings.Contains(log.String(), "compilation cache unavailable") {
		t.Fatalf("cache under a file: log %q; want it bypassed with a warning", log.String())
	}
	m, err := rt.LoadFile(context.Background(), watPath(t, "echo"))
	if err != nil {
		t.Fatal(err)
	}
	m.Close(context.Background())
}

// On Linux a module's code loaded from the cache is mapped from its entry,
// and the pages that describing it at load ran leave the process's memory
// once it is described: an idle module that was never called holds none
// of its code. A call maps what it runs again.
func TestLoadedCodeLeavesMemoryAfterDescribe(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("code is mapped from cache entries on Linux only")
	}
	ctx := context.Background()
	dir, _ := cachedEcho(t)
	rt := newRuntime(t, host.Config{CacheDir: dir})
	m, err := rt.LoadFile(ctx, watPath(t, "echo"))
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close(ctx)
	if kib := residentKiBUnder(t, dir); kib != 0 {
		t.Fatalf("%d KiB of the cache's code resident after the load; want 0", kib)
	}
	if res, err := m.Call(ctx, "wat.echo", json.RawMessage(`{"a":1}`), host.Limits{}); err != nil || string(res) != `{"a":1}` {
		t.Fatalf("call: %s, %v", res, err)
	}
	if kib := residentKiBUnder(t, dir); kib == 0 {
		t.Fatal("no code of the cache's resident after a call: the code is not mapped from the entry")
	}
}

// residentKiBUnder is the resident size of this process's mappings of
// files under dir (/proc/self/smaps).
func residentKiBUnder(t *testing.T, dir string) (kib int) {
	t.Helper()
	b, err := os.ReadFile("/proc/self/smaps")
	if err != nil {
		t.Fatal(err)
	}
	in := false
	for line := range strings.Lines(string(b)) {
		fields := strings.Fields(line)
		if len(fields) == 0 {
			continue
		}
		if !strings.HasSuffix(fields[0], ":") { // a mapping's first line
			in = len(fields) >= 6 && strings.HasPrefix(fields[5], dir)
		} else if in && fields[0] == "Rss:" {
			n, err := strconv.Atoi(fields[1])
			if err != nil {
				t.Fatal(err)
			}
			kib += n
		}
	}
	return kib
}
