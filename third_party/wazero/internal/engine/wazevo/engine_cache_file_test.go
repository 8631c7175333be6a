package wazevo

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"unsafe"

	"github.com/toolhost/toolhost/third_party/wazero/internal/platform"
	"github.com/toolhost/toolhost/third_party/wazero/internal/testing/require"
)

// An entry read from a file has its code mapped from that file where the platform allows
// it (an idle module's code is then no memory of its own), with the same bytes as written.
func TestDeserializeCompiledModuleMapsTheFile(t *testing.T) {
	code := bytes.Repeat([]byte{0xcc, 1, 2, 3}, 5000) // past one page
	path := filepath.Join(t.TempDir(), "entry")
	entry, err := io.ReadAll(serializeCompiledModule(testVersion, &compiledModule{
		executables:     &executables{executable: code},
		functionOffsets: []int{0, 7},
	}))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(path, entry, 0o600))

	f, err := os.Open(path)
	require.NoError(t, err)
	cm, stale, err := deserializeCompiledModule(testVersion, f)
	require.NoError(t, err)
	require.False(t, stale)
	require.Equal(t, code, cm.executable)
	require.Equal(t, []int{0, 7}, cm.functionOffsets)
	defer executablesFinalizer(cm.executables)

	require.Equal(t, platform.MapsCodeFiles, cm.fileMapped)
	if runtime.GOOS == "linux" {
		require.Equal(t, path, mappedFile(t, uintptr(unsafe.Pointer(&cm.executable[0]))))
	}
}

// Where the code cannot be mapped (here: an offset that is not page aligned, as on a
// noexec mount mmap refuses), it is copied from the file and checked as before.
func TestReadExecutableCopiesWhenItCannotMap(t *testing.T) {
	code := []byte{1, 2, 3, 4, 5}
	path := filepath.Join(t.TempDir(), "entry")
	require.NoError(t, os.WriteFile(path, concat([]byte{0}, code, crcf(code)), 0o600))
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	_, err = f.Seek(1, io.SeekStart)
	require.NoError(t, err)
	exec, mapped, err := readExecutable(f, 1, uint64(len(code)))
	require.NoError(t, err)
	require.False(t, mapped)
	defer platform.MunmapCodeSegment(exec)
	require.Equal(t, code, exec)
	if runtime.GOOS == "linux" {
		require.Equal(t, "", mappedFile(t, uintptr(unsafe.Pointer(&exec[0]))))
	}

	// A changed byte is still a checksum mismatch on this path.
	require.NoError(t, os.WriteFile(path, concat([]byte{0}, []byte{1, 2, 3, 4, 6}, crcf(code)), 0o600))
	_, err = f.Seek(1, io.SeekStart)
	require.NoError(t, err)
	_, _, err = readExecutable(f, 1, uint64(len(code)))
	require.Contains(t, fmt.Sprint(err), "checksum mismatch")
}

// mappedFile is the file that /proc/self/maps names for the mapping holding addr, or ""
// for an anonymous one.
func mappedFile(t *testing.T, addr uintptr) string {
	t.Helper()
	maps, err := os.Open("/proc/self/maps")
	require.NoError(t, err)
	defer maps.Close()
	sc := bufio.NewScanner(maps)
	for sc.Scan() {
		var lo, hi uintptr
		fields := strings.Fields(sc.Text())
		if _, err := fmt.Sscanf(fields[0], "%x-%x", &lo, &hi); err != nil || addr < lo || addr >= hi {
			continue
		}
		if len(fields) < 6 {
			return ""
		}
		return fields[5]
	}
	t.Fatalf("no mapping holds %#x", addr)
	return ""
}
