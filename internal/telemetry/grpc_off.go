//go:build !otlpgrpc

package telemetry

import (
	"context"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// GRPCBuilt reports whether this binary can export over OTLP/gRPC. The
// gRPC exporter links grpc and its protobuf stack (about 100 packages) and,
// through golang.org/x/net/trace's templates, switches off the linker's
// pruning of unused methods: it is left out unless built with
// -tags otlpgrpc (docs/TRACING.md, docs/BENCHMARKS.md "The binary").
const GRPCBuilt = false

func newGRPCExporter(context.Context) (sdktrace.SpanExporter, error) {
	return nil, ErrNoGRPC
}
