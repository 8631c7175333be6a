package transport_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolhost/toolhost/dispatcher"
	"github.com/toolhost/toolhost/registry"
	"github.com/toolhost/toolhost/transport"
)

// clientAt connects one more in-memory client to h's server, asking for a
// protocol version (the SDK client asks for 2026-07-28 by default).
func (h *harness) clientAt(t *testing.T, version string, opts ...*mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	ct, st := mcp.NewInMemoryTransports()
	ss, err := h.srv.Connect(t.Context(), st)
	if err != nil {
		t.Fatal(err)
	}
	var o *mcp.ClientOptions
	if len(opts) > 0 {
		o = opts[0]
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "transport-test", Version: "v0"}, o).
		Connect(t.Context(), ct, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatal(err)
	}
	if got := cs.InitializeResult().ProtocolVersion; got != version {
		t.Fatalf("negotiated %s, want %s", got, version)
	}
	t.Cleanup(func() {
		cs.Close()
		ss.Wait()
	})
	return cs
}

// 2026-07-28 takes any JSON value as structuredContent; objects are
// carried so at every revision.
func TestCallStructuredAnyJSON(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := start(t)
		cs := h.clientAt(t, transport.Revision20260728)
		for _, tc := range []struct {
			tool string
			args any
			want string
		}{
			{"list.numbers", map[string]any{}, `[1,2,3]`},
			{"text.count", map[string]any{"text": "a b"}, `{"text":"a b","words":2}`},
		} {
			res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: tc.tool, Arguments: tc.args})
			if err != nil || res.IsError {
				t.Fatalf("%s: %v %+v", tc.tool, err, res)
			}
			got, err := json.Marshal(res.StructuredContent)
			if err != nil {
				t.Fatal(err)
			}
			if !sameJSON(t, got, []byte(tc.want)) {
				t.Errorf("%s: structuredContent %s, want %s", tc.tool, got, tc.want)
			}
		}
	})
}

// Methods of capabilities this server does not advertise are -32601 on
// every transport, not empty lists.
func TestUnadvertisedMethods(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := start(t)
		for _, version := range []string{transport.Revision20251125, transport.Revision20260728} {
			cs := h.clientAt(t, version)
			caps := cs.InitializeResult().Capabilities
			if caps.Resources != nil || caps.Prompts != nil || caps.Completions != nil {
				t.Fatalf("%s: capabilities %+v advertise more than tools", version, caps)
			}
			_, err := cs.ListResources(t.Context(), nil)
			if code := rpcCode(err); code != jsonrpc.CodeMethodNotFound {
				t.Errorf("%s: resources/list: %v (code %d), want -32601", version, err, code)
			}
			_, err = cs.ListPrompts(t.Context(), nil)
			if code := rpcCode(err); code != jsonrpc.CodeMethodNotFound {
				t.Errorf("%s: prompts/list: %v (code %d), want -32601", version, err, code)
			}
		}
	})
}

func rpcCode(err error) int64 {
	var werr *jsonrpc.Error
	if errors.As(err, &werr) {
		return werr.Code
	}
	return 0
}

// The logging capability is used: a client that set a level hears each
// of its calls' outcomes; an unknown level is -32602.
func TestLogCallOutcome(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := start(t)
		logs := make(chan *mcp.LoggingMessageParams, 4)
		cs := h.clientAt(t, transport.Revision20251125, &mcp.ClientOptions{
			LoggingMessageHandler: func(_ context.Context, r *mcp.LoggingMessageRequest) { logs <- r.Params },
		})
		err := cs.SetLoggingLevel(t.Context(), &mcp.SetLoggingLevelParams{Level: "loud"})
		if code := rpcCode(err); code != jsonrpc.CodeInvalidParams {
			t.Fatalf("setLevel loud: %v (code %d), want -32602", err, code)
		}
		// No level set yet: no message.
		if _, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "text.count", Arguments: map[string]any{"text": "x"}}); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		if len(logs) != 0 {
			t.Fatalf("log message before any level was set: %+v", <-logs)
		}
		if err := cs.SetLoggingLevel(t.Context(), &mcp.SetLoggingLevelParams{Level: "warning"}); err != nil {
			t.Fatal(err)
		}
		for _, tool := range []string{"text.count", "fail.internal"} {
			if _, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: tool, Arguments: map[string]any{"text": "x"}}); err != nil {
				t.Fatal(err)
			}
		}
		synctest.Wait()
		if len(logs) != 1 {
			t.Fatalf("%d log messages at level warning, want 1 (the failure only)", len(logs))
		}
		got := <-logs
		data, _ := got.Data.(map[string]any)
		if got.Level != "warning" || got.Logger != "toolhost" || data["tool"] != "fail.internal" || data["outcome"] != "internal" {
			t.Errorf("log message %+v", got)
		}
	})
}

// The official Go SDK client over real HTTP: at its default (2026-07-28)
// it is served the stateless core, a 2025-11-25 client gets a session, and
// both call the same tools on the same /mcp. A 2026 listener hears
// list_changed through subscriptions/listen.
func TestHTTPBothRevisions(t *testing.T) {
	h := &harness{fakes: fakes{entered: make(chan struct{}), release: make(chan struct{})}}
	reg := h.registry(t)
	srv := transport.New(dispatcher.New(reg, dispatcher.Config{}), reg, transport.Options{Version: "test", Logger: slog.New(slog.DiscardHandler)})
	ts := httptest.NewServer(srv.HTTPHandler())
	t.Cleanup(ts.Close) // after the clients' Close: a listen stream holds a connection

	connect := func(version string) *mcp.ClientSession {
		c := mcp.NewClient(&mcp.Implementation{Name: "e2e", Version: "v0"}, nil)
		cs, err := c.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: ts.URL + "/mcp"}, &mcp.ClientSessionOptions{ProtocolVersion: version})
		if err != nil {
			t.Fatalf("%s: connect: %v", version, err)
		}
		t.Cleanup(func() { cs.Close() })
		if got := cs.InitializeResult().ProtocolVersion; got != version {
			t.Fatalf("negotiated %s, want %s", got, version)
		}
		return cs
	}
	modern := connect(transport.Revision20260728)
	legacy := connect(transport.Revision20251125)
	if modern.ID() != "" || legacy.ID() == "" {
		t.Errorf("session ids: 2026 %q (want none), 2025 %q (want one)", modern.ID(), legacy.ID())
	}
	if info := modern.InitializeResult().ServerInfo; info == nil || info.Name != "toolhost" {
		t.Errorf("2026 serverInfo %+v", info)
	}
	for _, cs := range []*mcp.ClientSession{modern, legacy} {
		version := cs.InitializeResult().ProtocolVersion
		list, err := cs.ListTools(t.Context(), nil)
		if err != nil || len(list.Tools) != 8 {
			t.Fatalf("%s: tools/list: %v, %+v", version, err, list)
		}
		res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "list.numbers", Arguments: map[string]any{}})
		if err != nil || res.IsError {
			t.Fatalf("%s: call: %v %+v", version, err, res)
		}
		if (res.StructuredContent != nil) != (version == transport.Revision20260728) {
			t.Errorf("%s: structuredContent %v", version, res.StructuredContent)
		}
		res, err = cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "no.such", Arguments: map[string]any{}})
		if err != nil {
			t.Fatalf("%s: a missing tool is a JSON-RPC error %v; want an isError result", version, err)
		}
		if env := failed(t, res); env.Kind != "not_found" {
			t.Errorf("%s: envelope %+v", version, env)
		}
	}
	events := listen(t, ts.URL)
	next, err := registry.New(reg.List()[1:])
	if err != nil {
		t.Fatal(err)
	}
	srv.SetTools(next)
	if ev := <-events; !strings.Contains(ev, "notifications/tools/list_changed") {
		t.Errorf("the listener got %s, want list_changed", ev)
	}
}

// listen opens a 2026-07-28 subscriptions/listen stream for list_changed
// and returns its events, after the acknowledgement: the server sends it
// once the subscription is registered, so nothing sent later is missed.
// The stream ends with the test.
func listen(t *testing.T, url string) <-chan string {
	t.Helper()
	return listenFor(t, url, `{"toolsListChanged":true}`)
}

// listenFor is listen for the notifications (a JSON object of flags).
func listenFor(t *testing.T, url, notifications string) <-chan string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	body := `{"jsonrpc":"2.0","id":1,"method":"subscriptions/listen","params":{"notifications":` + notifications + `,"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, url+"/mcp", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", transport.Revision20260728)
	req.Header.Set("Mcp-Method", "subscriptions/listen")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if res.StatusCode != http.StatusOK {
		t.Fatalf("subscriptions/listen: HTTP %d", res.StatusCode)
	}
	events := make(chan string, 16)
	go func() {
		defer res.Body.Close()
		sc := bufio.NewScanner(res.Body)
		for sc.Scan() {
			if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				events <- d
			}
		}
		close(events)
	}()
	if ack := <-events; !strings.Contains(ack, "notifications/subscriptions/acknowledged") {
		t.Fatalf("first event %q, want the acknowledgement", ack)
	}
	return events
}

// MaxStreamsPerCaller holds for stateless clients: a listening client
// holds one stream, so with a cap of one a second 2026-07-28 request of
// the same caller is refused with 429 until the listener goes.
func TestMaxStreamsPerCaller(t *testing.T) {
	h := &harness{fakes: fakes{entered: make(chan struct{}), release: make(chan struct{})}}
	reg := h.registry(t)
	srv := transport.New(dispatcher.New(reg, dispatcher.Config{}), reg, transport.Options{Version: "test",
		Logger: slog.New(slog.DiscardHandler), MaxStreamsPerCaller: 1, MaxSessions: 1})
	ts := httptest.NewServer(srv.HTTPHandler())
	t.Cleanup(ts.Close) // after the listener's end

	listen(t, ts.URL)
	if got := discover(t, ts.URL); got != http.StatusTooManyRequests {
		t.Errorf("second stream of one caller: HTTP %d, want 429", got)
	}
	// The 2025 session cap is apart: one session still opens.
	legacy, err := mcp.NewClient(&mcp.Implementation{Name: "old", Version: "v0"}, nil).Connect(t.Context(),
		&mcp.StreamableClientTransport{Endpoint: ts.URL + "/mcp"}, &mcp.ClientSessionOptions{ProtocolVersion: transport.Revision20251125})
	if err != nil {
		t.Fatalf("a 2025 session beside a stateless listener: %v", err)
	}
	legacy.Close()
}

// A stateless request gives its slot back when it is answered: a
// response body ends only after the handler (and its release) returned,
// so back-to-back requests under a cap of one all pass.
func TestMaxStreamsPerCallerReleases(t *testing.T) {
	h := &harness{fakes: fakes{entered: make(chan struct{}), release: make(chan struct{})}}
	reg := h.registry(t)
	srv := transport.New(dispatcher.New(reg, dispatcher.Config{}), reg, transport.Options{Version: "test",
		Logger: slog.New(slog.DiscardHandler), MaxStreamsPerCaller: 1})
	ts := httptest.NewServer(srv.HTTPHandler())
	defer ts.Close()
	for i := range 3 {
		if got := discover(t, ts.URL); got != http.StatusOK {
			t.Fatalf("request %d: HTTP %d", i, got)
		}
	}
}

func discover(t *testing.T, url string) int {
	t.Helper()
	body := `{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, url+"/mcp", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", "server/discover")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if _, err := io.Copy(io.Discard, res.Body); err != nil {
		t.Fatal(err)
	}
	return res.StatusCode
}

// postRaw sends one raw message to /mcp and returns the status, the session
// id header and the whole body.
func postRaw(t *testing.T, url, session, body string) (int, string, string) {
	t.Helper()
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, url+"/mcp", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", transport.Revision20251125)
	if session != "" {
		req.Header.Set("Mcp-Session-Id", session)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Error(err)
		return 0, "", ""
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Error(err)
	}
	return res.StatusCode, res.Header.Get("Mcp-Session-Id"), string(b)
}

// A call whose id is beyond 2^53 (handed to the SDK under a surrogate)
// can still be cancelled by the id the client knows.
func TestCancelBigID(t *testing.T) {
	entered := make(chan struct{}, 1)
	reg, err := registry.New([]*registry.Tool{{Name: "wait.ctx", InputSchema: json.RawMessage(`{"type":"object"}`), Timeout: time.Hour,
		Handler: registry.HandlerFunc(func(ctx context.Context, _ json.RawMessage) (json.RawMessage, error) {
			entered <- struct{}{}
			<-ctx.Done()
			return nil, ctx.Err()
		})}})
	if err != nil {
		t.Fatal(err)
	}
	srv := transport.New(dispatcher.New(reg, dispatcher.Config{}), reg, transport.Options{Version: "test", Logger: slog.New(slog.DiscardHandler)})
	ts := httptest.NewServer(srv.HTTPHandler())
	defer ts.Close()

	_, session, _ := postRaw(t, ts.URL, "", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
	postRaw(t, ts.URL, session, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	answer := make(chan string, 1)
	go func() {
		_, _, body := postRaw(t, ts.URL, session, `{"jsonrpc":"2.0","id":9007199254740993,"method":"tools/call","params":{"name":"wait.ctx","arguments":{}}}`)
		answer <- body
	}()
	<-entered
	if status, _, body := postRaw(t, ts.URL, session, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":9007199254740993}}`); status != http.StatusAccepted {
		t.Fatalf("cancel: HTTP %d %s", status, body)
	}
	select {
	case body := <-answer:
		if strings.Contains(body, "toolhost-int-id") {
			t.Errorf("the surrogate id leaked: %s", body)
		}
	case <-t.Context().Done():
		t.Fatal("the call was never cancelled")
	}
}

// A subscriptions/listen stream never ends by itself, so it must not hold
// Drain (which would then wait out its whole deadline): Drain returns once
// the calls are done and ends the stream by closing its session.
func TestDrainEndsListenStream(t *testing.T) {
	h := &harness{fakes: fakes{entered: make(chan struct{}), release: make(chan struct{})}}
	reg := h.registry(t)
	srv := transport.New(dispatcher.New(reg, dispatcher.Config{}), reg, transport.Options{Version: "test", Logger: slog.New(slog.DiscardHandler)})
	ts := httptest.NewServer(srv.HTTPHandler())
	t.Cleanup(ts.Close)
	events := listen(t, ts.URL)
	if err := srv.Drain(t.Context()); err != nil {
		t.Fatalf("Drain with a listener open: %v", err)
	}
	for range events { // ends when Drain has closed the stream
	}
}

// At 2026-07-28 the POST is the request's whole life: a client that drops
// it has cancelled the call, and the tool's context ends.
func TestStatelessDropCancels(t *testing.T) {
	entered, stopped := make(chan struct{}, 1), make(chan struct{})
	reg, err := registry.New([]*registry.Tool{{Name: "wait.ctx", InputSchema: json.RawMessage(`{"type":"object"}`), Timeout: time.Hour,
		Handler: registry.HandlerFunc(func(ctx context.Context, _ json.RawMessage) (json.RawMessage, error) {
			entered <- struct{}{}
			<-ctx.Done()
			close(stopped)
			return nil, ctx.Err()
		})}})
	if err != nil {
		t.Fatal(err)
	}
	srv := transport.New(dispatcher.New(reg, dispatcher.Config{}), reg, transport.Options{Version: "test", Logger: slog.New(slog.DiscardHandler)})
	ts := httptest.NewServer(srv.HTTPHandler())
	defer ts.Close()

	ctx, cancel := context.WithCancel(t.Context())
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"wait.ctx","arguments":{},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, ts.URL+"/mcp", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", transport.Revision20260728)
	req.Header.Set("Mcp-Method", "tools/call")
	req.Header.Set("Mcp-Name", "wait.ctx")
	done := make(chan struct{})
	go func() {
		defer close(done)
		if res, err := http.DefaultClient.Do(req); err == nil {
			_, _ = io.Copy(io.Discard, res.Body)
			res.Body.Close()
		}
	}()
	<-entered
	cancel()
	<-done
	select {
	case <-stopped:
	case <-t.Context().Done():
		t.Fatal("the call ran on after its request was dropped")
	}
}

// Access rules hold for stateless (2026-07-28) clients too: each request
// carries its token, and the listing is filtered per request.
// (TestAccessListsPerCaller covers 2025 sessions.)
func TestAccessListsPerCallerStateless(t *testing.T) {
	url, _ := accessServer(t, nil)
	for _, tc := range []struct {
		token string
		want  []string
	}{
		{aliceToken, []string{"text_count", "toolhost_plan"}},
		{bobToken, []string{"fail_internal", "fail_plain", "fail_schema", "fail_transient", "list_numbers"}},
	} {
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "stateless", Version: "0"}, nil).Connect(t.Context(),
			&mcp.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: bearer{tc.token}}, DisableStandaloneSSE: true}, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cs.Close() })
		if v := cs.InitializeResult().ProtocolVersion; v != transport.Revision20260728 {
			t.Fatalf("negotiated %s", v)
		}
		if got := listedNames(t, cs); !slices.Equal(got, tc.want) {
			t.Errorf("sees %v, want %v", got, tc.want)
		}
	}
}
