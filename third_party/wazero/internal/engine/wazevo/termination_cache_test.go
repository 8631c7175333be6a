package wazevo

import (
	"crypto/sha256"
	"encoding/binary"
	"testing"

	"github.com/toolhost/toolhost/third_party/wazero/internal/filecache"
	"github.com/toolhost/toolhost/third_party/wazero/internal/platform"
	"github.com/toolhost/toolhost/third_party/wazero/internal/testing/require"
	"github.com/toolhost/toolhost/third_party/wazero/internal/wasm"
)

// Test_fileCacheKey_terminationCheck: the file cache key of a module differs from the keys that
// unpatched v1.12.0 and the loop-header-only patch level computed for it, so that their code
// (which a deadline cannot stop, or stops only at loop headers) is never loaded.
func Test_fileCacheKey_terminationCheck(t *testing.T) {
	m := &wasm.Module{ID: sha256.Sum256([]byte("a module"))}
	keyWith := func(extra ...[]byte) (ret filecache.Key) {
		s := sha256.New()
		s.Write(m.ID[:])
		s.Write(magic)
		for _, e := range extra {
			s.Write(e)
		}
		var cpu [8]byte
		binary.LittleEndian.PutUint64(cpu[:], platform.CpuFeatures.Raw())
		s.Write(cpu[:])
		s.Sum(ret[:0])
		return
	}
	key := fileCacheKey(m)
	require.Equal(t, keyWith(inlineTerminationCheck, pageAlignedCode), key)
	require.NotEqual(t, keyWith(inlineTerminationCheck), key) // code not aligned for mapping
	require.NotEqual(t, keyWith(), key)
	require.NotEqual(t, keyWith([]byte("inline-termination-check")), key)
	require.NotEqual(t, keyWith([]byte("inline-termination-check+function-entries")), key)
}
