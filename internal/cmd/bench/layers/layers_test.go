//go:build unix

// Package layers_test measures each layer of one tools/call alone, on the
// same tool and arguments, so that a regression shows in the layer where
// it happens (issue 26, target 5). It is tests only: nothing here is
// linked into the server. `make bench-layers` runs it; docs/BENCHMARKS.md
// has the table and how to read it.
package layers_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolhost/toolhost/abi"
	"github.com/toolhost/toolhost/dispatcher"
	"github.com/toolhost/toolhost/host"
	"github.com/toolhost/toolhost/internal/testkit/mcphttp"
	"github.com/toolhost/toolhost/internal/testkit/testwasm"
	"github.com/toolhost/toolhost/loader"
	"github.com/toolhost/toolhost/registry"
	"github.com/toolhost/toolhost/third_party/wazero"
	"github.com/toolhost/toolhost/third_party/wazero/api"
	"github.com/toolhost/toolhost/third_party/wazero/imports/wasi_snapshot_preview1"
	"github.com/toolhost/toolhost/transport"
)

const (
	tool = "text.count"
	args = `{"text":"the cat and the hat"}`
	want = `{"words":5,"lines":1,"runes":19,"bytes":19}`
)

// BenchmarkLayers is one call of the Go SDK's text.count, reused
// instance, measured layer by layer. Each arm runs one layer on top of
// as little as it needs; a layer's own cost is its arm minus the arm it
// stands on:
//
//   - guest: the call in a live instance through plain wazero (alloc and
//     write the name and arguments, toolhost_call, read): the guest's
//     code and wazero's call path, the floor;
//   - host: host.Module.Do in the caller's warm instance (host + guest);
//     host-deadline: the same under a deadline, as the dispatcher calls it;
//   - validation: the tool record's Validate of the arguments, alone;
//   - dispatcher: Dispatcher.Call of the same record with a handler in
//     plain Go that returns the result at once (dispatcher + validation);
//     dispatcher+host: Call of the real record (dispatcher + validation +
//     host + guest); dispatcher+host-goroutine: the same call made on a
//     new goroutine each time, as the SDK runs each request;
//   - transport: a tools/call POST on a 2025-11-25 session through
//     transport's HTTPHandler, in process (no socket, no client), to that
//     plain-Go record (transport + dispatcher + validation);
//   - all: the same POST to the real record (every layer);
//   - sdk: the transport floor in process, the Go SDK's server and
//     Streamable HTTP handler with text.count in plain Go (as make
//     bench-e2e's floor): what of transport is the SDK's own.
//
// Interleave the arms with separate runs (make bench-layers: -count
// would run each arm its rounds in a row) and read them with benchstat. cpu-ns/op is the process's CPU time per call,
// the SDK's goroutines included: on a shared machine it varies less than
// the wall clock.
func BenchmarkLayers(b *testing.B) {
	ctx := context.Background()
	path := testwasm.Go(b, "./tools-src/text")
	cache := filepath.Join(os.TempDir(), "toolhost-bench-layers-cache")

	rt, err := host.New(ctx, host.Config{CacheDir: cache, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = rt.Close(ctx) })
	m, err := rt.LoadFile(ctx, path)
	if err != nil {
		b.Fatal(err)
	}
	real := record(b, m)
	stub := &registry.Tool{Name: real.Name, InputSchema: real.InputSchema, OutputSchema: real.OutputSchema,
		Timeout: real.Timeout, Idempotent: real.Idempotent, ReadOnly: real.ReadOnly,
		Handler: registry.HandlerFunc(func(context.Context, json.RawMessage) (json.RawMessage, error) {
			return json.RawMessage(want), nil
		})}
	stubReg := newRegistry(b, stub)
	realReg := newRegistry(b, real)
	stubD := dispatcher.New(stubReg, dispatcher.Config{})
	realD := dispatcher.New(realReg, dispatcher.Config{})
	logger := slog.New(slog.DiscardHandler)
	stubH := transport.New(stubD, stubReg, transport.Options{Version: "bench", Logger: logger}).HTTPHandler()
	realH := transport.New(realD, realReg, transport.Options{Version: "bench", Logger: logger}).HTTPHandler()
	sdkH := sdkFloor()
	stubSID, realSID, sdkSID := mcphttp.Session(b, stubH), mcphttp.Session(b, realH), mcphttp.Session(b, sdkH)
	live := newRawWarm(b, cache, path)

	a := []byte(args)
	call := dispatcher.Call{Tool: tool, Args: a, Options: dispatcher.Options{Caller: "bench"}}
	id := 0
	post := func(h http.Handler, sid, name string) ([]byte, error) {
		id++
		body := fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":%s}}`, id, name, args)
		w := mcphttp.Post(h, sid, body)
		if w.Code != http.StatusOK || !bytes.Contains(w.Body.Bytes(), []byte(`"words":5`)) {
			return nil, fmt.Errorf("HTTP %d: %s", w.Code, w.Body)
		}
		return []byte(want), nil
	}
	arms := []struct {
		name string
		call func() ([]byte, error)
		want string
	}{
		{"guest", func() ([]byte, error) { return live.call(ctx, a) }, `{"result":` + want + `}`},
		{"host", func() ([]byte, error) {
			return m.Do(ctx, host.Request{Tool: tool, Args: a, Caller: "bench", Reuse: true})
		}, want},
		// As the dispatcher calls it: under the attempt's deadline, which
		// wazero watches while the guest runs.
		{"host-deadline", func() ([]byte, error) {
			dctx, cancel := context.WithTimeout(ctx, real.Timeout)
			defer cancel()
			return m.Do(dctx, host.Request{Tool: tool, Args: a, Caller: "bench", Reuse: true})
		}, want},
		{"validation", func() ([]byte, error) { return []byte(want), real.Validate(a) }, want},
		{"dispatcher", func() ([]byte, error) { return stubD.Call(ctx, call) }, want},
		{"dispatcher+host", func() ([]byte, error) { return realD.Call(ctx, call) }, want},
		// As the SDK calls a handler: on a goroutine of its own per request.
		{"dispatcher+host-goroutine", func() ([]byte, error) {
			var res []byte
			var err error
			done := make(chan struct{})
			go func() {
				defer close(done)
				res, err = realD.Call(ctx, call)
			}()
			<-done
			return res, err
		}, want},
		{"transport", func() ([]byte, error) { return post(stubH, stubSID, "text_count") }, want},
		{"all", func() ([]byte, error) { return post(realH, realSID, "text_count") }, want},
		{"sdk", func() ([]byte, error) { return post(sdkH, sdkSID, tool) }, want},
	}
	for _, arm := range arms {
		b.Run(arm.name, func(b *testing.B) {
			// Outside the loop: the first call makes the caller's warm
			// instance; the GC keeps the arms before out of this one.
			if _, err := arm.call(); err != nil {
				b.Fatal(err)
			}
			runtime.GC()
			b.ReportAllocs()
			cpu := processCPU()
			for b.Loop() {
				res, err := arm.call()
				if err != nil || string(res) != arm.want {
					b.Fatalf("call = %s, %v; want %s", res, err, arm.want)
				}
			}
			b.ReportMetric(float64(processCPU()-cpu)/float64(b.N), "cpu-ns/op")
		})
	}
}

func record(b *testing.B, m *host.Module) *registry.Tool {
	for _, t := range m.Tools {
		if t.Name == tool {
			return loader.Record(m, t, loader.Override{})
		}
	}
	b.Fatalf("no tool %s in the module", tool)
	return nil
}

func newRegistry(b *testing.B, t *registry.Tool) *registry.Registry {
	reg, err := registry.New([]*registry.Tool{t})
	if err != nil {
		b.Fatal(err)
	}
	return reg
}

// sdkFloor is internal/cmd/bench/e2e's floor server as a handler: the Go
// SDK with text.count (tools-src/text's count) in plain Go.
func sdkFloor() http.Handler {
	type countArgs struct {
		Text string `json:"text"`
	}
	type counts struct {
		Words int `json:"words"`
		Lines int `json:"lines"`
		Runes int `json:"runes"`
		Bytes int `json:"bytes"`
	}
	s := mcp.NewServer(&mcp.Implementation{Name: "floor", Version: "bench"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: tool, Description: "Count words, lines and characters"},
		func(_ context.Context, _ *mcp.CallToolRequest, a countArgs) (*mcp.CallToolResult, counts, error) {
			lines := strings.Count(a.Text, "\n")
			if a.Text != "" && !strings.HasSuffix(a.Text, "\n") {
				lines++
			}
			return nil, counts{Words: len(strings.Fields(a.Text)), Lines: lines,
				Runes: utf8.RuneCountInString(a.Text), Bytes: len(a.Text)}, nil
		})
	return mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil)
}

// rawWarm is one live instance through plain wazero configured as
// host.New configures it (the compiler, the file cache, close on context
// done, WASI, real clocks and randomness, _initialize), its exports
// looked up once.
type rawWarm struct {
	mod       api.Module
	alloc, fn api.Function
}

func newRawWarm(b *testing.B, cacheDir, path string) *rawWarm {
	ctx := context.Background()
	cache, err := wazero.NewCompilationCacheWithDir(cacheDir)
	if err != nil {
		b.Fatal(err)
	}
	rt := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfigCompiler().
		WithCloseOnContextDone(true).WithCompilationCache(cache))
	b.Cleanup(func() { rt.Close(ctx); cache.Close(ctx) })
	wasi_snapshot_preview1.MustInstantiate(ctx, rt)
	wasm, err := os.ReadFile(path)
	if err != nil {
		b.Fatal(err)
	}
	c, err := rt.CompileModule(ctx, wasm)
	if err != nil {
		b.Fatal(err)
	}
	mod, err := rt.InstantiateModule(ctx, c, wazero.NewModuleConfig().WithName("").
		WithStartFunctions("_initialize").WithSysWalltime().WithSysNanotime().WithRandSource(rand.Reader))
	if err != nil {
		b.Fatal(err)
	}
	return &rawWarm{mod: mod, alloc: mod.ExportedFunction("toolhost_alloc"), fn: mod.ExportedFunction("toolhost_call")}
}

// call is one toolhost_call of tool with a; it returns the raw response.
func (w *rawWarm) call(ctx context.Context, a []byte) ([]byte, error) {
	write := func(p []byte) (uint32, error) {
		res, err := w.alloc.Call(ctx, uint64(len(p)))
		if err != nil {
			return 0, err
		}
		if !w.mod.Memory().Write(uint32(res[0]), p) {
			return 0, fmt.Errorf("alloc out of range")
		}
		return uint32(res[0]), nil
	}
	namePtr, err := write([]byte(tool))
	if err != nil {
		return nil, err
	}
	argsPtr, err := write(a)
	if err != nil {
		return nil, err
	}
	res, err := w.fn.Call(ctx, uint64(namePtr), uint64(len(tool)), uint64(argsPtr), uint64(len(a)))
	if err != nil {
		return nil, err
	}
	ptr, n := abi.Unpack(res[0])
	out, ok := w.mod.Memory().Read(ptr, n)
	if !ok {
		return nil, fmt.Errorf("response out of range")
	}
	return append([]byte(nil), out...), nil
}

// processCPU is this process's CPU time, user and system.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
