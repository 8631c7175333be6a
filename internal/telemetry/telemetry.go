// Package telemetry turns the standard OTEL_* environment variables into
// the process's tracing: an OTLP exporter (http/protobuf, or grpc in a
// binary built with -tags otlpgrpc) behind a batching TracerProvider when
// an endpoint is set, and nothing at all otherwise. Only cmd/toolhost imports it: the packages that make spans
// (transport, dispatcher, the egress host functions) see a
// trace.TracerProvider from the otel API, or nil when tracing is off, and
// never an exporter.
package telemetry

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// The protocols OTEL_EXPORTER_OTLP_PROTOCOL and
// OTEL_EXPORTER_OTLP_TRACES_PROTOCOL may name.
const (
	ProtocolHTTP = "http/protobuf"
	ProtocolGRPC = "grpc"
)

// Options configure Setup. The zero value is usable: every field documents
// its default.
type Options struct {
	// ServiceName is the resource's service.name unless OTEL_SERVICE_NAME
	// or OTEL_RESOURCE_ATTRIBUTES set one; empty means "toolhost".
	ServiceName string
	// ServiceVersion is the resource's service.version; empty leaves it
	// out.
	ServiceVersion string
	// Logger receives the SDK's export errors as warnings; nil means
	// slog.Default(). Setup installs it as the otel error handler, which
	// is process-wide: only the program's main should call Setup.
	Logger *slog.Logger
}

// Tracing is the process's tracing. Its methods are safe for concurrent
// use.
type Tracing struct {
	sdk      *sdktrace.TracerProvider // nil when off
	endpoint string
	protocol string
}

// Setup reads the environment and returns the tracing it asks for:
//
//   - off (no exporter, Provider returns nil) when OTEL_SDK_DISABLED is
//     true, when OTEL_TRACES_EXPORTER is "none", or when neither
//     OTEL_EXPORTER_OTLP_TRACES_ENDPOINT nor OTEL_EXPORTER_OTLP_ENDPOINT is
//     set;
//   - otherwise OTLP over OTEL_EXPORTER_OTLP_TRACES_PROTOCOL, else
//     OTEL_EXPORTER_OTLP_PROTOCOL, else http/protobuf; the exporter reads
//     its other settings (headers, timeout, compression, certificates)
//     from the standard variables, the SDK its sampler
//     (OTEL_TRACES_SAMPLER) and batching (OTEL_BSP_*), and the resource
//     OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES.
//
// A value it cannot honour (an unknown protocol or exporter) is an error
// naming the variable, not a silent fallback. The caller must Shutdown
// the result to flush what is buffered.
func Setup(ctx context.Context, opts Options) (*Tracing, error) {
	if off, err := disabled(); off || err != nil {
		return &Tracing{}, err
	}
	endpoint := firstEnv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_ENDPOINT")
	if endpoint == "" {
		return &Tracing{}, nil
	}
	protocol, variable, err := protocolFromEnv()
	if err != nil {
		return nil, err
	}
	exp, err := newExporter(ctx, protocol)
	if errors.Is(err, ErrNoGRPC) {
		return nil, fmt.Errorf("telemetry: %s=%s: %w", variable, protocol, err)
	}
	if err != nil {
		return nil, fmt.Errorf("telemetry: OTLP %s exporter for %s: %w", protocol, endpoint, err)
	}
	logger := opts.Logger
	if logger == nil {
		logger = slog.Default()
	}
	res, err := newResource(ctx, opts)
	if errors.Is(err, resource.ErrPartialResource) {
		// A malformed OTEL_RESOURCE_ATTRIBUTES entry: the rest is kept.
		logger.Warn("tracing: some resource attributes were ignored", "err", err)
	} else if err != nil {
		return nil, fmt.Errorf("telemetry: resource: %w", err)
	}
	otel.SetErrorHandler(otel.ErrorHandlerFunc(func(err error) {
		logger.Warn("tracing: export failed", "err", err)
	}))
	sdk := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res))
	return &Tracing{sdk: sdk, endpoint: endpoint, protocol: protocol}, nil
}

// Provider is the TracerProvider to hand to the packages that make spans,
// or nil when tracing is off: they treat nil as "make no spans", which
// costs nothing.
func (t *Tracing) Provider() trace.TracerProvider {
	if t == nil || t.sdk == nil {
		return nil
	}
	return t.sdk
}

// String says where spans go, for the start-up log.
func (t *Tracing) String() string {
	if t == nil || t.sdk == nil {
		return "off"
	}
	return fmt.Sprintf("OTLP %s to %s", t.protocol, t.endpoint)
}

// Shutdown exports the spans still buffered and stops the exporter,
// within ctx's deadline. It does nothing when tracing is off, and may be
// called more than once.
func (t *Tracing) Shutdown(ctx context.Context) error {
	if t == nil || t.sdk == nil {
		return nil
	}
	return t.sdk.Shutdown(ctx)
}

// disabled reports the variables that turn tracing off.
func disabled() (bool, error) {
	if strings.EqualFold(strings.TrimSpace(os.Getenv("OTEL_SDK_DISABLED")), "true") {
		return true, nil
	}
	switch v := strings.TrimSpace(os.Getenv("OTEL_TRACES_EXPORTER")); v {
	case "", "otlp":
		return false, nil
	case "none":
		return true, nil
	default:
		return false, fmt.Errorf("telemetry: OTEL_TRACES_EXPORTER=%q: toolhost exports traces over OTLP only; use \"otlp\" or \"none\"", v)
	}
}

// protocolFromEnv returns the protocol asked for and the variable that
// asked (empty for the default).
func protocolFromEnv() (protocol, variable string, err error) {
	name := "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"
	v := strings.TrimSpace(os.Getenv(name))
	if v == "" {
		name = "OTEL_EXPORTER_OTLP_PROTOCOL"
		v = strings.TrimSpace(os.Getenv(name))
	}
	switch v {
	case "":
		return ProtocolHTTP, "", nil
	case ProtocolHTTP, ProtocolGRPC:
		return v, name, nil
	}
	return "", "", fmt.Errorf("telemetry: %s=%q: toolhost speaks %q or %q", name, v, ProtocolHTTP, ProtocolGRPC)
}

func newExporter(ctx context.Context, protocol string) (sdktrace.SpanExporter, error) {
	if protocol == ProtocolGRPC {
		return newGRPCExporter(ctx)
	}
	return otlptracehttp.New(ctx)
}

// newResource names the service; the environment's attributes override
// the defaults given here.
func newResource(ctx context.Context, opts Options) (*resource.Resource, error) {
	name := opts.ServiceName
	if name == "" {
		name = "toolhost"
	}
	attrs := []attribute.KeyValue{attribute.String("service.name", name)}
	if opts.ServiceVersion != "" {
		attrs = append(attrs, attribute.String("service.version", opts.ServiceVersion))
	}
	return resource.New(ctx, resource.WithAttributes(attrs...), resource.WithTelemetrySDK(), resource.WithFromEnv())
}

func firstEnv(names ...string) string {
	for _, n := range names {
		if v := strings.TrimSpace(os.Getenv(n)); v != "" {
			return v
		}
	}
	return ""
}

// ErrNoGRPC is the error Setup wraps when the environment asks for OTLP
// over gRPC in a binary built without it (the default build: GRPCBuilt is
// false). Its text names the build tag that brings the exporter back.
var ErrNoGRPC = errors.New(`this toolhost was built without the OTLP gRPC exporter: use OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf (collectors take it on port 4318), or rebuild with "go build -tags otlpgrpc ./cmd/toolhost" (make build TAGS=otlpgrpc)`)
