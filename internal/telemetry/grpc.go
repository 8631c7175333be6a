//go:build otlpgrpc

package telemetry

import (
	"context"

	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// GRPCBuilt reports whether this binary can export over OTLP/gRPC.
const GRPCBuilt = true

func newGRPCExporter(ctx context.Context) (sdktrace.SpanExporter, error) {
	return otlptracegrpc.New(ctx)
}
