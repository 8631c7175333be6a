package wazero

import (
	"bufio"
	"context"
	"os"
	goruntime "runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/toolhost/toolhost/third_party/wazero/internal/platform"
	"github.com/toolhost/toolhost/third_party/wazero/internal/testing/require"
)

// fortyTwo is a module exporting f, which returns 42.
var fortyTwo = []byte{
	0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00,
	0x01, 0x05, 0x01, 0x60, 0x00, 0x01, 0x7f, // type 0: () -> i32
	0x03, 0x02, 0x01, 0x00, // function 0 of type 0
	0x07, 0x05, 0x01, 0x01, 'f', 0x00, 0x00, // export "f"
	0x0a, 0x06, 0x01, 0x04, 0x00, 0x41, 0x2a, 0x0b, // i32.const 42
}

// Code loaded from the file cache is mapped from the entry: once run, its
// pages are resident; ReleaseCodePages lets them go, and the next run maps
// them again. Code compiled in the process is never released.
func TestReleaseCodePages(t *testing.T) {
	if goruntime.GOOS != "linux" || !platform.CompilerSupported() {
		t.Skip("code is mapped from cache files on Linux, with the compiler, only")
	}
	ctx := context.Background()
	dir := t.TempDir()
	open := func() (Runtime, CompiledModule) {
		cache, err := NewCompilationCacheWithDir(dir)
		require.NoError(t, err)
		r := NewRuntimeWithConfig(ctx, NewRuntimeConfigCompiler().WithCompilationCache(cache))
		t.Cleanup(func() { r.Close(ctx) })
		cm, err := r.CompileModule(ctx, fortyTwo)
		require.NoError(t, err)
		return r, cm
	}
	call := func(r Runtime, cm CompiledModule) {
		m, err := r.InstantiateModule(ctx, cm, NewModuleConfig().WithName(""))
		require.NoError(t, err)
		defer m.Close(ctx)
		res, err := m.ExportedFunction("f").Call(ctx)
		require.NoError(t, err)
		require.Equal(t, []uint64{42}, res)
	}

	r, compiled := open() // compiled here, then written to the cache
	call(r, compiled)
	require.False(t, ReleaseCodePages(compiled))

	r, loaded := open() // loaded from the cache: mapped
	call(r, loaded)
	require.NotEqual(t, 0, cacheResidentKiB(t, dir))
	require.True(t, ReleaseCodePages(loaded))
	require.Equal(t, 0, cacheResidentKiB(t, dir))
	call(r, loaded)
	require.NotEqual(t, 0, cacheResidentKiB(t, dir))
}

// cacheResidentKiB is the resident size of this process's mappings of files in dir.
func cacheResidentKiB(t *testing.T, dir string) (kib int) {
	f, err := os.Open("/proc/self/smaps")
	require.NoError(t, err)
	defer f.Close()
	sc := bufio.NewScanner(f)
	in := false
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) == 0 {
			continue
		}
		if !strings.HasSuffix(fields[0], ":") { // a mapping's first line
			in = len(fields) >= 6 && strings.HasPrefix(fields[5], dir)
		} else if in && fields[0] == "Rss:" {
			n, err := strconv.Atoi(fields[1])
			require.NoError(t, err)
			kib += n
		}
	}
	return kib
}
