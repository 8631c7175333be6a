package wazevo

import (
	"context"
	"strings"
	"testing"

	"github.com/toolhost/toolhost/third_party/wazero/api"
	"github.com/toolhost/toolhost/third_party/wazero/internal/filecache"
	"github.com/toolhost/toolhost/third_party/wazero/internal/testing/require"
)

// TestEngine_HasCompiledModule: the engine tells whether it holds code
// for a module's ID, in memory or in the file cache, and refuses to
// compile a module whose function bodies were not validated because it
// did.
func TestEngine_HasCompiledModule(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	e := NewEngine(ctx, api.CoreFeaturesV2, filecache.New(dir)).(*engine)
	m := bodiesModule()
	require.False(t, e.HasCompiledModule(m))
	require.NoError(t, e.CompileModule(ctx, m, nil, true))
	require.True(t, e.HasCompiledModule(m)) // in memory

	other := NewEngine(ctx, api.CoreFeaturesV2, filecache.New(dir)).(*engine)
	require.True(t, other.HasCompiledModule(bodiesModule())) // in the file cache
	unknown := bodiesModule()
	unknown.ID[0] = 0xff
	require.False(t, other.HasCompiledModule(unknown))

	unknown.FunctionsValidatedBefore = true
	err := other.CompileModule(ctx, unknown, nil, true)
	require.Error(t, err)
	require.True(t, strings.HasPrefix(err.Error(), "compilationcache:"), err.Error())
	require.False(t, other.HasCompiledModule(unknown))
}
