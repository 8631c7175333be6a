package main

import (
	"context"
	"log/slog"
	"time"

	"github.com/toolhost/toolhost/internal/telemetry"
)

// flushTimeout bounds the export of the spans still buffered at exit: a
// collector that is away must not hold the shutdown.
const flushTimeout = 5 * time.Second

// startTracing sets up tracing from the standard OTEL_* variables (off
// without an endpoint: docs/TRACING.md) and returns it with the function
// that flushes it at exit.
func startTracing(ctx context.Context, logger *slog.Logger) (*telemetry.Tracing, func(), error) {
	tr, err := telemetry.Setup(context.WithoutCancel(ctx), telemetry.Options{ServiceVersion: version, Logger: logger})
	if err != nil {
		return nil, nil, err
	}
	if tr.Provider() != nil {
		logger.Info("tracing", "export", tr.String())
	}
	flush := func() {
		fctx, cancel := context.WithTimeout(context.Background(), flushTimeout)
		defer cancel()
		if err := tr.Shutdown(fctx); err != nil {
			logger.Warn("tracing: spans still buffered at exit were not all exported", "err", err)
		}
	}
	return tr, flush, nil
}
