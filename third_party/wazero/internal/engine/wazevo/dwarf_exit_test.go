package wazevo_test

import (
	"context"
	"testing"

	"github.com/toolhost/toolhost/third_party/wazero"
	"github.com/toolhost/toolhost/third_party/wazero/imports/wasi_snapshot_preview1"
	"github.com/toolhost/toolhost/third_party/wazero/internal/testing/dwarftestdata"
	"github.com/toolhost/toolhost/third_party/wazero/internal/testing/require"
)

// TestE2E_trapKeepsSourceLines: a trap's stack trace still names the source lines from DWARF;
// only a closed module's exit error, whose trace is discarded, skips looking them up.
func TestE2E_trapKeepsSourceLines(t *testing.T) {
	ctx := context.Background()
	r := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfigCompiler())
	defer r.Close(ctx)
	wasi_snapshot_preview1.MustInstantiate(ctx, r)
	_, err := r.Instantiate(ctx, dwarftestdata.ZigCCWasm)
	require.Error(t, err)
	require.Contains(t, err.Error(), "main.c:7:18")
}
