package interpreter_test

import (
	"context"
	"errors"
	"testing"

	"github.com/toolhost/toolhost/third_party/wazero"
	"github.com/toolhost/toolhost/third_party/wazero/internal/testing/require"
)

// errGaveUp is the cause a caller gives when it no longer wants a compile.
var errGaveUp = errors.New("gave up")

// countdownCtx is done once Err has been asked more than n times: a
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

// TestInterpreter_CompileModule_stopsOnContext: a compile whose context
// ends, before it or between two functions, returns the context's cause
// and keeps nothing: the same bytes compile afterwards, and run.
func TestInterpreter_CompileModule_stopsOnContext(t *testing.T) {
	bg := context.Background()
	r := wazero.NewRuntimeWithConfig(bg, wazero.NewRuntimeConfigInterpreter().WithCloseOnContextDone(true))
	t.Cleanup(func() { require.NoError(t, r.Close(bg)) })
	ctx, cancel := context.WithCancelCause(bg)
	cancel(errGaveUp)
	_, err := r.CompileModule(ctx, recursionModule)
	require.True(t, errors.Is(err, errGaveUp), "cancelled before: got %v", err)
	_, err = r.CompileModule(&countdownCtx{Context: bg, n: 1}, recursionModule)
	require.True(t, errors.Is(err, context.Canceled), "cancelled between functions: got %v", err)

	_, err = r.NewHostModuleBuilder("env").NewFunctionBuilder().WithFunc(func() {}).Export("ready").Instantiate(bg)
	require.NoError(t, err)
	m, err := r.Instantiate(bg, recursionModule)
	require.NoError(t, err)
	res, err := m.ExportedFunction("fib").Call(bg, 10)
	require.NoError(t, err)
	require.Equal(t, uint64(55), res[0])
}
