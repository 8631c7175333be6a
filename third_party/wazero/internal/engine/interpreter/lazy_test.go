package interpreter_test

import (
	"context"
	"sync"
	"testing"

	"github.com/toolhost/toolhost/third_party/wazero"
	"github.com/toolhost/toolhost/third_party/wazero/internal/testing/require"
)

// TestInterpreter_lazyTranslation_concurrent: the instances of one
// compiled module share its functions, each translated on its first call
// (this fork's change): instances calling them at once, from the first
// call on, compute what one would.
func TestInterpreter_lazyTranslation_concurrent(t *testing.T) {
	ctx := context.Background()
	r := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfigInterpreter().WithCloseOnContextDone(true))
	t.Cleanup(func() { require.NoError(t, r.Close(ctx)) })
	_, err := r.NewHostModuleBuilder("env").NewFunctionBuilder().WithFunc(func() {}).Export("ready").Instantiate(ctx)
	require.NoError(t, err)
	compiled, err := r.CompileModule(ctx, recursionModule)
	require.NoError(t, err)

	const n = 8
	var wg sync.WaitGroup
	results := make([]uint64, n)
	errs := make([]error, n)
	start := make(chan struct{})
	for i := range n {
		m, err := r.InstantiateModule(ctx, compiled, wazero.NewModuleConfig().WithName(""))
		require.NoError(t, err)
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			name := "fib"
			if i%2 == 1 {
				name = "run" // through the import, then fib
			}
			res, err := m.ExportedFunction(name).Call(ctx, 20)
			if err == nil {
				results[i] = res[0]
			}
			errs[i] = err
		}()
	}
	close(start)
	wg.Wait()
	for i := range n {
		require.NoError(t, errs[i])
		require.Equal(t, uint64(6765), results[i], "instance %d", i)
	}
}
