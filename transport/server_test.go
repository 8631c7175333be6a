package transport_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolhost/toolhost/abi"
	"github.com/toolhost/toolhost/dispatcher"
	"github.com/toolhost/toolhost/internal/guestnote"
	"github.com/toolhost/toolhost/registry"
	"github.com/toolhost/toolhost/transport"
)

// fakes are the tools every wire test serves. Each is a plain handler:
// no WebAssembly is involved in the transport's tests.
type fakes struct {
	countCalls atomic.Int32
	entered    chan struct{} // block.wait: a call has started
	release    chan struct{} // block.wait: let it finish
}

const countSchema = `{"type":"object","properties":{"text":{"type":"string"}},"required":["text"],"additionalProperties":false}`

func (f *fakes) registry(t testing.TB) *registry.Registry {
	t.Helper()
	fn := func(h func(ctx context.Context, args json.RawMessage) (json.RawMessage, error)) registry.Handler {
		return registry.HandlerFunc(h)
	}
	fail := func(err error) registry.Handler {
		return fn(func(context.Context, json.RawMessage) (json.RawMessage, error) { return nil, err })
	}
	tools := []*registry.Tool{
		{Name: "text.count", Title: "Count words", Description: "Counts words.", InputSchema: json.RawMessage(countSchema),
			OutputSchema: json.RawMessage(`{"type":"object"}`), Timeout: 2 * time.Second, Idempotent: true, ReadOnly: true,
			Module: registry.Module{Path: "plugins/text.wasm", SHA256: "abc123"},
			Handler: fn(func(_ context.Context, args json.RawMessage) (json.RawMessage, error) {
				f.countCalls.Add(1)
				var in struct{ Text string }
				if err := json.Unmarshal(args, &in); err != nil {
					return nil, err
				}
				out, _ := json.Marshal(map[string]any{"words": len(strings.Fields(in.Text)), "text": in.Text})
				return out, nil
			})},
		{Name: "list.numbers", InputSchema: json.RawMessage(`{"type":"object"}`), Timeout: time.Second,
			Handler: fn(func(context.Context, json.RawMessage) (json.RawMessage, error) {
				return json.RawMessage(`[1, 2, 3]`), nil
			})},
		{Name: "fail.internal", InputSchema: json.RawMessage(`{"type":"object"}`), Timeout: 3 * time.Second,
			Handler: fail(&abi.Error{Kind: abi.KindInternal, Message: "boom"})},
		{Name: "fail.schema", InputSchema: json.RawMessage(`{"type":"object"}`), Timeout: 4 * time.Second, ReadOnly: true,
			Handler: fail(&abi.Error{Kind: abi.KindSchema, Message: "text is too long"})},
		{Name: "fail.transient", InputSchema: json.RawMessage(`{"type":"object"}`), Timeout: 5 * time.Second, Idempotent: true,
			Handler: fail(&abi.Error{Kind: abi.KindTransient, Message: "upstream 429", RetryAfterMS: 200})},
		{Name: "fail.plain", InputSchema: json.RawMessage(`{"type":"object"}`), Timeout: 6 * time.Second,
			Handler: fail(errors.New("host fault"))},
		{Name: "block.ctx", InputSchema: json.RawMessage(`{"type":"object"}`), Timeout: time.Minute,
			Handler: fn(func(ctx context.Context, _ json.RawMessage) (json.RawMessage, error) {
				<-ctx.Done()
				return nil, ctx.Err()
			})},
		{Name: "block.wait", InputSchema: json.RawMessage(`{"type":"object"}`), Timeout: time.Hour,
			Handler: fn(func(ctx context.Context, args json.RawMessage) (json.RawMessage, error) {
				var in struct{ Notes bool }
				if json.Unmarshal(args, &in) == nil && in.Notes { // progress, as the host feeds a guest's
					sink := guestnote.SinkFrom(ctx)
					sink.Progress(1, 20, "")
					sink.Progress(5, 20, "5 of 20 segments sieved")
				}
				f.entered <- struct{}{}
				<-f.release
				return json.RawMessage(`{"released":true}`), nil
			})},
	}
	reg, err := registry.New(tools)
	if err != nil {
		t.Fatal(err)
	}
	return reg
}

type harness struct {
	fakes
	srv *transport.Server
	cs  *mcp.ClientSession
}

// start serves the fake tools over an in-memory MCP connection and
// returns a connected client. Call it inside a synctest bubble: the
// dispatcher's retry delays and timeouts then run on the fake clock.
func start(t *testing.T, opts ...transport.Options) *harness {
	t.Helper()
	h := &harness{fakes: fakes{entered: make(chan struct{}), release: make(chan struct{})}}
	reg := h.registry(t)
	d := dispatcher.New(reg, dispatcher.Config{})
	o := transport.Options{Version: "test"}
	if len(opts) > 0 {
		o = opts[0]
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	h.srv = transport.New(d, reg, o)
	ct, st := mcp.NewInMemoryTransports()
	ss, err := h.srv.Connect(t.Context(), st)
	if err != nil {
		t.Fatal(err)
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "transport-test", Version: "v0"}, nil)
	h.cs, err = client.Connect(t.Context(), ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		h.cs.Close()
		ss.Wait()
	})
	return h
}

func (h *harness) call(t *testing.T, name string, args any, meta mcp.Meta) *mcp.CallToolResult {
	t.Helper()
	res, err := h.cs.CallTool(t.Context(), &mcp.CallToolParams{Name: name, Arguments: args, Meta: meta})
	if err != nil {
		t.Fatalf("tools/call %s: JSON-RPC error %v; tool failures must be isError results", name, err)
	}
	return res
}

// envelope is the DispatchError as a client sees it in _meta.
type envelope struct {
	Kind         string `json:"kind"`
	Message      string `json:"message"`
	Attempts     int    `json:"attempts"`
	JSONRPCCode  int    `json:"jsonrpc_code"`
	RetryAfterMS int64  `json:"retry_after_ms"`
}

func failed(t *testing.T, res *mcp.CallToolResult) envelope {
	t.Helper()
	if !res.IsError {
		t.Fatalf("result is not an error: %+v", res)
	}
	raw, ok := res.Meta[transport.MetaError]
	if !ok {
		t.Fatalf("isError result has no _meta[%q]: %+v", transport.MetaError, res.Meta)
	}
	b, err := json.Marshal(raw)
	if err != nil {
		t.Fatal(err)
	}
	var env envelope
	if err := json.Unmarshal(b, &env); err != nil {
		t.Fatalf("envelope %s: %v", b, err)
	}
	if len(res.Content) != 1 {
		t.Fatalf("want one content, got %d", len(res.Content))
	}
	text, ok := res.Content[0].(*mcp.TextContent)
	if !ok {
		t.Fatalf("content is %T, not text", res.Content[0])
	}
	if !strings.Contains(text.Text, env.Kind) || !strings.Contains(text.Text, env.Message) {
		t.Errorf("text %q does not name kind %q and message %q", text.Text, env.Kind, env.Message)
	}
	if res.StructuredContent != nil {
		t.Errorf("failed result has structured content %v", res.StructuredContent)
	}
	return env
}

func TestListTools(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := start(t)
		res, err := h.cs.ListTools(t.Context(), nil)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		byName := map[string]*mcp.Tool{}
		for _, tl := range res.Tools {
			names = append(names, tl.Name)
			// Listed by wire name; the manifest name, the tool's identity,
			// rides in _meta.
			manifest, _ := tl.Meta[transport.MetaToolName].(string)
			byName[manifest] = tl
		}
		want := []string{"block_ctx", "block_wait", "fail_internal", "fail_plain", "fail_schema", "fail_transient", "list_numbers", "text_count"}
		if !slices.Equal(names, want) {
			t.Fatalf("tools/list = %v, want %v", names, want)
		}
		flags := []struct {
			name             string
			idempotent, ro   bool
			timeoutMS        float64
			hasOutputSchema  bool
			title, modulePth string
		}{
			{"text.count", true, true, 2000, true, "Count words", "plugins/text.wasm"},
			{"fail.internal", false, false, 3000, false, "", ""},
			{"fail.schema", false, true, 4000, false, "", ""},
			{"fail.transient", true, false, 5000, false, "", ""},
			{"block.wait", false, false, 3600000, false, "", ""},
		}
		for _, f := range flags {
			tl := byName[f.name]
			if tl.Annotations == nil {
				t.Errorf("%s: no annotations", f.name)
				continue
			}
			if tl.Annotations.IdempotentHint != f.idempotent || tl.Annotations.ReadOnlyHint != f.ro {
				t.Errorf("%s: idempotentHint %v readOnlyHint %v, want %v %v", f.name,
					tl.Annotations.IdempotentHint, tl.Annotations.ReadOnlyHint, f.idempotent, f.ro)
			}
			if got := tl.Meta[transport.MetaToolTimeoutMS]; got != f.timeoutMS {
				t.Errorf("%s: _meta[%q] = %v (%T), want %v", f.name, transport.MetaToolTimeoutMS, got, got, f.timeoutMS)
			}
			if (tl.OutputSchema != nil) != f.hasOutputSchema {
				t.Errorf("%s: output schema %v", f.name, tl.OutputSchema)
			}
			if tl.Title != f.title {
				t.Errorf("%s: title %q", f.name, tl.Title)
			}
			mod, _ := tl.Meta[transport.MetaToolModule].(map[string]any)
			if f.modulePth != "" && (mod["path"] != f.modulePth || mod["sha256"] != "abc123") {
				t.Errorf("%s: _meta[%q] = %v", f.name, transport.MetaToolModule, tl.Meta[transport.MetaToolModule])
			}
		}
		// The input schema reaches the client as declared, in normal form.
		schema, err := json.Marshal(byName["text.count"].InputSchema)
		if err != nil {
			t.Fatal(err)
		}
		if want, _ := abi.NormalizeSchema([]byte(countSchema)); !sameJSON(t, schema, want) {
			t.Errorf("input schema %s, want %s", schema, want)
		}
	})
}

func TestCallSuccess(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := start(t)
		res := h.call(t, "text.count", map[string]any{"text": "one two three"}, nil)
		if res.IsError {
			t.Fatalf("isError: %+v", res)
		}
		if len(res.Content) != 1 {
			t.Fatalf("%d contents", len(res.Content))
		}
		text, ok := res.Content[0].(*mcp.TextContent)
		if !ok {
			t.Fatalf("content is %T", res.Content[0])
		}
		structured, err := json.Marshal(res.StructuredContent)
		if err != nil {
			t.Fatal(err)
		}
		want := `{"text":"one two three","words":3}`
		if !sameJSON(t, structured, []byte(want)) {
			t.Errorf("structuredContent = %s, want %s", structured, want)
		}
		if !sameJSON(t, []byte(text.Text), structured) {
			t.Errorf("text content %s differs from structuredContent %s", text.Text, structured)
		}
		if _, ok := res.Meta[transport.MetaError]; ok {
			t.Errorf("success carries an error envelope: %v", res.Meta)
		}
	})
}

func TestCallFailures(t *testing.T) {
	tests := []struct {
		name     string
		tool     string
		args     any
		meta     mcp.Meta
		kind     string
		code     int
		attempts int
		message  []string
	}{
		{"unknown tool", "no.such.tool", map[string]any{}, nil, "not_found", -32601, 0, []string{`"no.such.tool"`}},
		{"unknown tool, no args", "nope", nil, nil, "not_found", -32601, 0, []string{`"nope"`}},
		{"schema: wrong type", "text.count", map[string]any{"text": 5}, nil, "schema", -32602, 0, []string{"/text"}},
		{"schema: missing required", "text.count", map[string]any{}, nil, "schema", -32602, 0, []string{"text"}},
		{"schema: additional property", "text.count", map[string]any{"text": "a", "zz": 1}, nil, "schema", -32602, 0, []string{"zz"}},
		{"bad _meta timeout", "text.count", map[string]any{"text": "a"}, mcp.Meta{transport.MetaTimeoutMS: -1}, "schema", -32602, 0,
			[]string{transport.MetaTimeoutMS}},
		{"bad _meta timeout fraction", "text.count", map[string]any{"text": "a"}, mcp.Meta{transport.MetaTimeoutMS: 1.5}, "schema", -32602, 0,
			[]string{transport.MetaTimeoutMS}},
		{"bad _meta budget", "text.count", map[string]any{"text": "a"}, mcp.Meta{transport.MetaBudget: "2"}, "schema", -32602, 0,
			[]string{transport.MetaBudget}},
		{"bad _meta key", "text.count", map[string]any{"text": "a"}, mcp.Meta{transport.MetaIdempotencyKey: strings.Repeat("k", 256)}, "schema", -32602, 0,
			[]string{transport.MetaIdempotencyKey}},
		{"bad _meta priority", "text.count", map[string]any{"text": "a"}, mcp.Meta{transport.MetaPriority: 3}, "schema", -32602, 0,
			[]string{transport.MetaPriority}},
		{"bad _meta on unknown tool", "nope", nil, mcp.Meta{transport.MetaBudget: -1}, "schema", -32602, 0, []string{transport.MetaBudget}},
		{"budget 0 reaches the dispatcher", "text.count", map[string]any{"text": "a"}, mcp.Meta{transport.MetaBudget: 0}, "budget_exceeded", -32603, 0, nil},
		{"guest internal", "fail.internal", nil, nil, "internal", -32603, 1, []string{"boom"}},
		{"guest schema", "fail.schema", nil, nil, "schema", -32602, 1, []string{"text is too long"}},
		{"guest transient, retried", "fail.transient", nil, nil, "transient", -32603, 3, []string{"upstream 429"}},
		{"guest transient, budget 1", "fail.transient", nil, mcp.Meta{transport.MetaBudget: 1}, "budget_exceeded", -32603, 1, nil},
		{"plain handler error", "fail.plain", nil, nil, "internal", -32603, 1, []string{"host fault"}},
		{"timeout from _meta", "block.ctx", nil, mcp.Meta{transport.MetaTimeoutMS: 50}, "timeout", -32603, 1, []string{"50ms"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h := start(t)
				t0 := time.Now()
				env := failed(t, h.call(t, tt.tool, tt.args, tt.meta))
				if env.Kind != tt.kind || env.JSONRPCCode != tt.code || env.Attempts != tt.attempts {
					t.Errorf("envelope %+v, want kind %s code %d attempts %d", env, tt.kind, tt.code, tt.attempts)
				}
				for _, m := range tt.message {
					if !strings.Contains(env.Message, m) {
						t.Errorf("message %q does not contain %q", env.Message, m)
					}
				}
				if tt.kind == "schema" && tt.attempts == 0 && h.countCalls.Load() != 0 {
					t.Errorf("the handler ran %d times for a refused call", h.countCalls.Load())
				}
				if tt.tool == "block.ctx" {
					if el := time.Since(t0); el != 50*time.Millisecond {
						t.Errorf("timed out after %v (fake clock), want 50ms", el)
					}
				}
			})
		})
	}
}

// A guest's retry_after_ms stretches the retry delay and reaches the
// envelope.
func TestCallTransientRetryAfter(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := start(t)
		t0 := time.Now()
		env := failed(t, h.call(t, "fail.transient", nil, nil))
		if env.RetryAfterMS != 200 {
			t.Errorf("retry_after_ms = %d, want 200", env.RetryAfterMS)
		}
		if el := time.Since(t0); el < 400*time.Millisecond {
			t.Errorf("3 attempts with retry_after 200ms took only %v", el)
		}
	})
}

// The idempotency key in _meta reaches the dispatcher: a second call with
// the key replays the first outcome without running the tool.
func TestCallIdempotencyKey(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := start(t)
		meta := mcp.Meta{transport.MetaIdempotencyKey: "req-1"}
		first := h.call(t, "text.count", map[string]any{"text": "a b"}, meta)
		second := h.call(t, "text.count", map[string]any{"text": "a b"}, meta)
		if first.IsError || second.IsError {
			t.Fatalf("errors: %+v %+v", first, second)
		}
		if n := h.countCalls.Load(); n != 1 {
			t.Errorf("handler ran %d times, want 1", n)
		}
		// Same key, other arguments: a conflict, reported as schema.
		env := failed(t, h.call(t, "text.count", map[string]any{"text": "c"}, meta))
		if env.Kind != "schema" || !strings.Contains(env.Message, "req-1") {
			t.Errorf("conflict envelope %+v", env)
		}
	})
}

func TestDrainWaitsForCallInHandler(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := start(t)
		var handlerDone atomic.Bool
		callDone := make(chan struct{})
		go func() {
			defer close(callDone)
			// The response may be lost to the session close that ends
			// Drain (see TestDrainDeliversResponse), so only completion
			// matters here.
			h.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "block.wait"})
		}()
		<-h.entered // the call is in the handler

		drained := make(chan error, 1)
		go func() { drained <- h.srv.Drain(context.Background()) }()
		synctest.Wait() // Drain is now blocked, if it blocks at all
		select {
		case err := <-drained:
			t.Fatalf("Drain returned %v while a call was in its handler", err)
		default:
		}

		handlerDone.Store(true) // the handler returns only after this
		close(h.release)
		if err := <-drained; err != nil {
			t.Fatalf("Drain = %v", err)
		}
		if !handlerDone.Load() {
			t.Fatal("Drain returned before the handler")
		}
		<-callDone
		// Drain closed the session: the client sees the connection end.
		h.cs.Wait()
	})
}

// A call that finishes while Drain waits must still get its response.
//
// It does not today: the call leaves the in-flight count when callTool
// returns, before the SDK writes the response; Drain then closes the
// session, and the SDK's jsonrpc2 layer refuses writes on a closing
// connection (ErrServerClosing), so the client sees EOF instead of the
// result. Over Streamable HTTP the request wrapper keeps the count until
// the POST finishes, but over stdio (and any other MCP transport) the last
// responses of a graceful shutdown are lost. Fixing it needs the count to
// last until the response is written (e.g. a Connection wrapper).
func TestDrainDeliversResponse(t *testing.T) {
	for range 20 {
		synctest.Test(t, func(t *testing.T) {
			h := start(t)
			type result struct {
				res *mcp.CallToolResult
				err error
			}
			got := make(chan result, 1)
			go func() {
				res, err := h.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "block.wait"})
				got <- result{res, err}
			}()
			<-h.entered
			drained := make(chan error, 1)
			go func() { drained <- h.srv.Drain(context.Background()) }()
			synctest.Wait()
			close(h.release)
			if err := <-drained; err != nil {
				t.Fatal(err)
			}
			r := <-got
			if r.err != nil || r.res.IsError {
				t.Fatalf("drained call: %+v, %v", r.res, r.err)
			}
		})
	}
}

func TestDrainHonoursContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := start(t)
		go func() {
			// The session is closed under the call by Drain; its error
			// is expected and ignored.
			h.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "block.wait"})
		}()
		<-h.entered

		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		t0 := time.Now()
		err := h.srv.Drain(ctx)
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("Drain = %v, want context.DeadlineExceeded", err)
		}
		if el := time.Since(t0); el != 5*time.Second {
			t.Errorf("Drain gave up after %v, want 5s", el)
		}

		cctx, ccancel := context.WithCancel(context.Background())
		ccancel()
		if err := h.srv.Drain(cctx); !errors.Is(err, context.Canceled) {
			t.Errorf("Drain with a cancelled context = %v, want context.Canceled", err)
		}
		close(h.release)
	})
}

func TestDrainIdle(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := start(t)
		if res := h.call(t, "text.count", map[string]any{"text": "x"}, nil); res.IsError {
			t.Fatal(res)
		}
		// The client can hold its answer before the server's Write call has
		// returned (and left the in-flight count): let it return.
		synctest.Wait()
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		// Nothing in flight: nil even with a dead context.
		if err := h.srv.Drain(ctx); err != nil {
			t.Errorf("Drain with nothing in flight = %v", err)
		}
	})
}

func sameJSON(t *testing.T, a, b []byte) bool {
	t.Helper()
	var va, vb any
	if err := json.Unmarshal(a, &va); err != nil {
		t.Fatalf("%s: %v", a, err)
	}
	if err := json.Unmarshal(b, &vb); err != nil {
		t.Fatalf("%s: %v", b, err)
	}
	ja, _ := json.Marshal(va)
	jb, _ := json.Marshal(vb)
	return string(ja) == string(jb)
}

// Every result, success or failure, carries the call's request id (the id
// of its audit line), and no two calls share one.
func TestCallRequestID(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var audit bytes.Buffer
		h := start(t, transport.Options{Logger: slog.New(slog.NewJSONHandler(&audit, nil))})
		seen := map[string]bool{}
		for _, c := range []struct {
			tool string
			args any
		}{{"text.count", map[string]any{"text": "a"}}, {"nope", nil}, {"fail.internal", nil}} {
			res := h.call(t, c.tool, c.args, nil)
			id, _ := res.Meta[transport.MetaRequestID].(string)
			if len(id) != 16 || strings.Trim(id, "0123456789abcdef") != "" {
				t.Errorf("%s: _meta[%q] = %v", c.tool, transport.MetaRequestID, res.Meta[transport.MetaRequestID])
			}
			if seen[id] {
				t.Errorf("%s: request id %s reused", c.tool, id)
			}
			seen[id] = true
			if !strings.Contains(audit.String(), `"request_id":"`+id+`"`) {
				t.Errorf("%s: no audit line for request %s in %s", c.tool, id, audit.String())
			}
		}
	})
}

// Up to 2025-11-25 structuredContent is a JSON object by definition;
// other results travel as text only (2026-07-28: see
// TestCallStructuredAnyJSON).
func TestCallNonObjectResultIsTextOnly(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := start(t)
		res, err := h.clientAt(t, transport.Revision20251125).CallTool(t.Context(), &mcp.CallToolParams{Name: "list.numbers"})
		if err != nil {
			t.Fatal(err)
		}
		if res.IsError {
			t.Fatalf("isError: %+v", res)
		}
		if res.StructuredContent != nil {
			t.Errorf("structuredContent = %v for an array result", res.StructuredContent)
		}
		if text, ok := res.Content[0].(*mcp.TextContent); !ok || !sameJSON(t, []byte(text.Text), []byte(`[1,2,3]`)) {
			t.Errorf("content %+v", res.Content[0])
		}
	})
}

func TestCallMaxArgsBytes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := start(t, transport.Options{MaxArgsBytes: 20})
		if res := h.call(t, "text.count", map[string]any{"text": "short"}, nil); res.IsError {
			t.Fatalf("small arguments refused: %+v", res)
		}
		env := failed(t, h.call(t, "text.count", map[string]any{"text": strings.Repeat("x", 20)}, nil))
		if env.Kind != "schema" || env.JSONRPCCode != -32602 || !strings.Contains(env.Message, "20") {
			t.Errorf("envelope %+v", env)
		}
		if n := h.countCalls.Load(); n != 1 {
			t.Errorf("handler ran %d times, want 1", n)
		}
	})
}

func TestCallMaxCallsPerCaller(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := start(t, transport.Options{MaxCallsPerCaller: 1})
		done := make(chan struct{})
		go func() {
			defer close(done)
			h.call(t, "block.wait", nil, nil)
		}()
		<-h.entered
		env := failed(t, h.call(t, "text.count", map[string]any{"text": "a"}, nil))
		if env.Kind != "rate_limited" || env.JSONRPCCode != -32603 {
			t.Errorf("second call while one is in flight: %+v", env)
		}
		close(h.release)
		<-done
		if res := h.call(t, "text.count", map[string]any{"text": "a"}, nil); res.IsError {
			t.Errorf("call after the first finished: %+v", res)
		}
	})
}
