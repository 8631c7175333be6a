package telemetry_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/toolhost/toolhost/internal/telemetry"
	"github.com/toolhost/toolhost/internal/testkit/otlptest"
)

// clearEnv unsets every variable Setup reads, so the machine's own
// environment cannot decide a case.
func clearEnv(t *testing.T) {
	for _, v := range []string{"OTEL_SDK_DISABLED", "OTEL_TRACES_EXPORTER", "OTEL_EXPORTER_OTLP_ENDPOINT",
		"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_PROTOCOL", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL",
		"OTEL_SERVICE_NAME", "OTEL_RESOURCE_ATTRIBUTES"} {
		t.Setenv(v, "")
	}
}

// Without an endpoint, or when the variables say so, tracing is off: no
// provider at all, so the packages that take one make no spans.
func TestOff(t *testing.T) {
	for _, tc := range []struct {
		name string
		env  map[string]string
	}{
		{"no endpoint", nil},
		{"sdk disabled", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:1", "OTEL_SDK_DISABLED": "true"}},
		{"exporter none", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:1", "OTEL_TRACES_EXPORTER": "none"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clearEnv(t)
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			tr, err := telemetry.Setup(context.Background(), telemetry.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if tr.Provider() != nil || tr.String() != "off" {
				t.Fatalf("provider %v (%s), want off", tr.Provider(), tr)
			}
			if err := tr.Shutdown(context.Background()); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// A value Setup cannot honour is an error naming the variable.
func TestRefused(t *testing.T) {
	for _, tc := range []struct{ key, val string }{
		{"OTEL_EXPORTER_OTLP_PROTOCOL", "http/json"},
		{"OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "thrift"},
		{"OTEL_TRACES_EXPORTER", "zipkin"},
	} {
		clearEnv(t)
		t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:1")
		t.Setenv(tc.key, tc.val)
		_, err := telemetry.Setup(context.Background(), telemetry.Options{})
		if err == nil || !strings.Contains(err.Error(), tc.key) {
			t.Fatalf("%s=%s: err %v, want one naming the variable", tc.key, tc.val, err)
		}
	}
}

// Spans reach a real OTLP receiver over each protocol, with the service
// name, when Shutdown flushes them (no export happens before: the batch
// delay is the default 5 s).
func TestExport(t *testing.T) {
	type exportCase struct {
		name    string
		start   func(testing.TB) (*otlptest.Receiver, string)
		env     map[string]string
		service string
	}
	cases := []exportCase{
		{"http/protobuf by default", otlptest.NewHTTP, nil, "toolhost"},
		{"the traces protocol wins", otlptest.NewHTTP, map[string]string{"OTEL_EXPORTER_OTLP_PROTOCOL": "grpc",
			"OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "http/protobuf"}, "toolhost"},
		{"OTEL_SERVICE_NAME wins", otlptest.NewHTTP, map[string]string{"OTEL_SERVICE_NAME": "edge-7"}, "edge-7"},
	}
	if telemetry.GRPCBuilt {
		cases = append(cases,
			exportCase{"grpc", otlptest.NewGRPC, map[string]string{"OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"}, "toolhost"},
			exportCase{"the traces protocol wins over http", otlptest.NewGRPC, map[string]string{"OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf",
				"OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "grpc"}, "toolhost"})
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			clearEnv(t)
			rcv, url := tc.start(t)
			t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", url)
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			tr, err := telemetry.Setup(context.Background(), telemetry.Options{ServiceVersion: "v9"})
			if err != nil {
				t.Fatal(err)
			}
			if tr.Provider() == nil || !strings.Contains(tr.String(), url) {
				t.Fatalf("tracing %s, want on to %s", tr, url)
			}
			_, span := tr.Provider().Tracer("t").Start(context.Background(), "tools/call echo")
			span.End()
			if err := tr.Shutdown(context.Background()); err != nil {
				t.Fatal(err)
			}
			spans := rcv.Spans()
			if len(spans) != 1 || spans[0].Name != "tools/call echo" || spans[0].Service != tc.service {
				t.Fatalf("received %+v, want one span of service %s", spans, tc.service)
			}
			if err := tr.Shutdown(context.Background()); err != nil {
				t.Fatalf("second Shutdown: %v", err)
			}
		})
	}
}

// In a binary built without -tags otlpgrpc, asking for gRPC is an error
// that names the variable that asked and the build tag, not a silent
// fallback to HTTP (which a gRPC collector port would not understand).
func TestGRPCNotBuilt(t *testing.T) {
	if telemetry.GRPCBuilt {
		t.Skip("built with -tags otlpgrpc: TestExport covers gRPC")
	}
	for _, key := range []string{"OTEL_EXPORTER_OTLP_PROTOCOL", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"} {
		clearEnv(t)
		t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:1")
		t.Setenv(key, "grpc")
		tr, err := telemetry.Setup(context.Background(), telemetry.Options{})
		if !errors.Is(err, telemetry.ErrNoGRPC) || tr != nil {
			t.Fatalf("%s=grpc: tracing %v, err %v; want ErrNoGRPC", key, tr, err)
		}
		for _, want := range []string{key + "=grpc", "-tags otlpgrpc"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("error %q does not say %q", err, want)
			}
		}
	}
}
