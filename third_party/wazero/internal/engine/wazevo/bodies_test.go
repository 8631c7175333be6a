package wazevo

import (
	"context"
	"testing"

	"github.com/toolhost/toolhost/third_party/wazero/api"
	"github.com/toolhost/toolhost/third_party/wazero/internal/filecache"
	"github.com/toolhost/toolhost/third_party/wazero/internal/testing/require"
	"github.com/toolhost/toolhost/third_party/wazero/internal/wasm"
)

// bodiesModule is a fresh module of two functions whose bodies the engine
// may release once compiled.
func bodiesModule() *wasm.Module {
	m := &wasm.Module{
		TypeSection:     []wasm.FunctionType{{}},
		FunctionSection: []wasm.Index{0, 0},
		CodeSection: []wasm.Code{
			{Body: []byte{wasm.OpcodeNop, wasm.OpcodeEnd}},
			{Body: []byte{wasm.OpcodeEnd}},
		},
	}
	m.ID = wasm.ModuleID{1, 2, 3}
	return m
}

// TestEngine_CompileModule_releasesBodies: once compiled, whether by the
// compiler or from the file cache, a module keeps no Wasm bytecode, and
// its compiled code is still there to instantiate.
func TestEngine_CompileModule_releasesBodies(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	for _, from := range []string{"compiler", "file cache"} {
		t.Run(from, func(t *testing.T) {
			e := NewEngine(ctx, api.CoreFeaturesV2, filecache.New(dir)).(*engine)
			m := bodiesModule()
			require.NoError(t, e.CompileModule(ctx, m, nil, true))
			for i, c := range m.CodeSection {
				require.Nil(t, c.Body, "function %d kept its body", i)
			}
			cm, ok := e.getCompiledModuleFromMemory(m, false)
			require.True(t, ok)
			require.Equal(t, 2, len(cm.functionOffsets))
			require.True(t, len(cm.executable) > 0)
		})
	}
}
