package extism

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"testing"

	extism "github.com/extism/go-sdk"
	"github.com/toolhost/toolhost/host"
)

// BenchmarkPerCallExtismPlugin compares one Extism plugin (plugin/, its
// hyper-mcp v2 call_tool) served by toolhost (its own extism:host/env,
// imports/extism) with the same plugin under Extism's go-sdk, fresh and
// reused instances. Both arms end with the result: toolhost maps the
// CallToolResult onto its result JSON, the go-sdk arm decodes it.
func BenchmarkPerCallExtismPlugin(b *testing.B) {
	ctx := context.Background()
	path := wasmPath(b, "bin/extism-count.wasm")
	rt, err := host.New(ctx, host.Config{CacheDir: b.TempDir(), Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { rt.Close(ctx) })
	m, err := rt.LoadFile(ctx, path)
	if err != nil {
		b.Fatal(err)
	}
	args := []byte(countArgs)
	input := []byte(`{"request":{"name":"text.count","arguments":` + countArgs + `},"context":{"id":0,"_meta":{}}}`)
	bench := func(name string, call func() ([]byte, error)) {
		b.Run(name, func(b *testing.B) {
			if _, err := call(); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				res, err := call()
				if err != nil || string(res) != countWant {
					b.Fatalf("call = %s, %v; want %s", res, err, countWant)
				}
			}
		})
	}
	bench("toolhost-extism-fresh", func() ([]byte, error) { return m.Call(ctx, "text.count", args, host.Limits{}) })
	bench("toolhost-extism-reuse", func() ([]byte, error) {
		return m.Do(ctx, host.Request{Tool: "text.count", Args: args, Reuse: true})
	})
	ext := extismPlugin(b, ctx, path)
	callTool := func(p *extism.Plugin) ([]byte, error) {
		rc, out, err := p.Call("call_tool", input)
		if err != nil {
			return nil, err
		}
		if rc != 0 {
			return nil, fmt.Errorf("call_tool returned %d", rc)
		}
		var res struct {
			StructuredContent json.RawMessage `json:"structuredContent"`
		}
		if err := json.Unmarshal(out, &res); err != nil {
			return nil, err
		}
		return res.StructuredContent, nil
	}
	bench("extism-gosdk-fresh", func() ([]byte, error) {
		p, err := ext.Instance(ctx, extism.PluginInstanceConfig{})
		if err != nil {
			return nil, err
		}
		defer p.Close(ctx)
		return callTool(p)
	})
	reused, err := ext.Instance(ctx, extism.PluginInstanceConfig{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { reused.Close(ctx) })
	bench("extism-gosdk-reused", func() ([]byte, error) { return callTool(reused) })
}
