package wazevo

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/toolhost/toolhost/third_party/wazero/api"
	"github.com/toolhost/toolhost/third_party/wazero/experimental"
	"github.com/toolhost/toolhost/third_party/wazero/internal/testing/require"
)

// errGaveUp is the cause a caller gives when it no longer wants a compile.
var errGaveUp = errors.New("gave up")

// countdownCtx is done once Err has been asked after more than n times: a
// compile cancelled between two of its functions, without a goroutine
// racing the compiler.
type countdownCtx struct {
	context.Context
	n int
}

func (c *countdownCtx) Err() error {
	if c.n--; c.n < 0 {
		return context.Canceled
	}
	return nil
}

// TestEngine_CompileModule_stopsOnContext: a compile whose context ends
// returns the context's cause and keeps nothing, with one worker as with
// several (toolhost stops a background compile in process so).
func TestEngine_CompileModule_stopsOnContext(t *testing.T) {
	for _, workers := range []int{1, 4} {
		t.Run(fmt.Sprintf("workers_%d", workers), func(t *testing.T) {
			ctx, cancel := context.WithCancelCause(experimental.WithCompilationWorkers(context.Background(), workers))
			cancel(errGaveUp)
			e := NewEngine(ctx, api.CoreFeaturesV2, nil).(*engine)
			m := bodiesModule()
			err := e.CompileModule(ctx, m, nil, false)
			require.True(t, errors.Is(err, errGaveUp), "got %v", err)
			_, ok := e.getCompiledModuleFromMemory(m, false)
			require.False(t, ok, "a stopped compile was kept")
		})
	}
	t.Run("between functions", func(t *testing.T) {
		ctx := &countdownCtx{Context: experimental.WithCompilationWorkers(context.Background(), 1), n: 1}
		e := NewEngine(context.Background(), api.CoreFeaturesV2, nil).(*engine)
		m := bodiesModule()
		err := e.CompileModule(ctx, m, nil, false)
		require.True(t, errors.Is(err, context.Canceled), "got %v", err)
		_, ok := e.getCompiledModuleFromMemory(m, false)
		require.False(t, ok, "a stopped compile was kept")
	})
}
