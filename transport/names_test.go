package transport_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolhost/toolhost/dispatcher"
	"github.com/toolhost/toolhost/events"
	"github.com/toolhost/toolhost/registry"
	"github.com/toolhost/toolhost/transport"
)

// viewTools are records as the loader makes them under operator views:
// text.count with its default wire name, db.write renamed and described by
// the operator, secret.get hidden.
func viewTools(t *testing.T, calls *ran) []*registry.Tool {
	t.Helper()
	handler := func(name string) registry.Handler {
		return registry.HandlerFunc(func(context.Context, json.RawMessage) (json.RawMessage, error) {
			calls.add(name)
			return json.Marshal(map[string]string{"ran": name})
		})
	}
	obj := json.RawMessage(`{"type":"object"}`)
	return []*registry.Tool{
		{Name: "text.count", Description: "Counts words.", InputSchema: obj, Timeout: time.Second, ReadOnly: true, Handler: handler("text.count")},
		{Name: "db.write", WireName: "save_row", Description: "Saves one row (operator's words).", InputSchema: obj, Timeout: time.Second, Handler: handler("db.write")},
		{Name: "secret.get", Hidden: true, InputSchema: obj, Timeout: time.Second, Handler: handler("secret.get")},
	}
}

// ran records which tools' handlers ran.
type ran struct {
	mu    sync.Mutex
	names []string
}

func (r *ran) add(name string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.names = append(r.names, name)
}

func (r *ran) get() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.names)
}

func (r *ran) reset() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.names = nil
}

// httpClient serves srv's Streamable HTTP handler on a real loopback
// server and connects the official SDK client to it.
func httpClient(t *testing.T, srv *transport.Server) *mcp.ClientSession {
	t.Helper()
	hs := httptest.NewServer(srv.HTTPHandler())
	t.Cleanup(hs.Close)
	c := mcp.NewClient(&mcp.Implementation{Name: "names-test", Version: "v0"}, nil)
	cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: hs.URL, MaxRetries: -1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

func listed(t *testing.T, cs *mcp.ClientSession) map[string]*mcp.Tool {
	t.Helper()
	out := map[string]*mcp.Tool{}
	for tl, err := range cs.Tools(context.Background(), nil) {
		if err != nil {
			t.Fatal(err)
		}
		out[tl.Name] = tl
	}
	return out
}

func TestWireNamesOverHTTP(t *testing.T) {
	var calls ran
	reg, err := registry.New(viewTools(t, &calls))
	if err != nil {
		t.Fatal(err)
	}
	var audit bytes.Buffer
	bus := events.NewBus(nil)
	sub := bus.Subscribe(64, "dispatch.result")
	defer sub.Close()
	srv := transport.New(dispatcher.New(reg, dispatcher.Config{Events: bus}), reg, transport.Options{
		Logger: slog.New(slog.NewJSONHandler(&audit, nil)), Plans: &transport.PlanOptions{},
	})
	cs := httpClient(t, srv)

	tools := listed(t, cs)
	names := slices.Sorted(func(yield func(string) bool) {
		for n := range tools {
			if !yield(n) {
				return
			}
		}
	})
	if want := []string{"save_row", "text_count", "toolhost_plan"}; !slices.Equal(names, want) {
		t.Fatalf("tools/list = %v, want %v (secret.get hidden)", names, want)
	}
	for wire, manifest := range map[string]string{"text_count": "text.count", "save_row": "db.write", "toolhost_plan": "toolhost.plan"} {
		if got := tools[wire].Meta[transport.MetaToolName]; got != manifest {
			t.Errorf("%s: _meta[%q] = %v, want %q", wire, transport.MetaToolName, got, manifest)
		}
	}
	if d := tools["save_row"].Description; d != "Saves one row (operator's words)." {
		t.Errorf("save_row description %q", d)
	}

	call := func(name string, meta mcp.Meta) *mcp.CallToolResult {
		t.Helper()
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: map[string]any{}, Meta: meta})
		if err != nil {
			t.Fatalf("tools/call %s: %v", name, err)
		}
		return res
	}
	kind := func(res *mcp.CallToolResult) string {
		if !res.IsError {
			return "ok"
		}
		b, _ := json.Marshal(res.Meta[transport.MetaError])
		var e struct{ Kind string }
		_ = json.Unmarshal(b, &e)
		return e.Kind
	}
	tests := []struct {
		name string
		meta mcp.Meta
		want string // kind, "ok" for success
		ran  string // the manifest name that ran
	}{
		{"text_count", nil, "ok", "text.count"},
		{"text.count", nil, "ok", "text.count"},
		{"save_row", nil, "ok", "db.write"},
		{"db.write", nil, "ok", "db.write"},
		{"db_write", nil, "not_found", ""}, // renamed: the default wire name is not the tool's
		{"secret.get", nil, "not_found", ""},
		{"secret_get", nil, "not_found", ""},
		{"text_count", mcp.Meta{transport.MetaToolName: "text.count"}, "ok", "text.count"},
		{"text.count", mcp.Meta{transport.MetaToolName: "text_count"}, "ok", "text.count"},
		{"text_count", mcp.Meta{transport.MetaToolName: "db.write"}, "schema", ""},
		{"text_count", mcp.Meta{transport.MetaToolName: 7}, "schema", ""},
	}
	for _, tt := range tests {
		calls.reset()
		res := call(tt.name, tt.meta)
		if got := kind(res); got != tt.want {
			t.Errorf("call %s (_meta %v) = %s, want %s", tt.name, tt.meta, got, tt.want)
		}
		if got := calls.get(); tt.ran != "" && !slices.Equal(got, []string{tt.ran}) || tt.ran == "" && len(got) != 0 {
			t.Errorf("call %s ran %v, want %q", tt.name, got, tt.ran)
		}
	}
	// The audit log and events name tools by their manifest names.
	if strings.Contains(audit.String(), `"tool":"text_count"`) || !strings.Contains(audit.String(), `"tool":"text.count"`) ||
		!strings.Contains(audit.String(), `"tool":"db.write"`) {
		t.Errorf("audit log does not use manifest names:\n%s", audit.String())
	}
	// Events are published before the call's answer, so they are all in
	// the subscription's buffer by now.
	next := func() events.Event {
		select {
		case e := <-sub.C:
			return e
		default:
			t.Fatal("a dispatch.result is missing")
			return events.Event{}
		}
	}
	for range 4 {
		e := next()
		r, ok := e.Data.(dispatcher.ResultEvent)
		if !ok {
			t.Fatalf("dispatch.result data is %T", e.Data)
		}
		if r.Tool != "text.count" && r.Tool != "db.write" {
			t.Errorf("dispatch.result names %q, not a manifest name", r.Tool)
		}
	}
	// Names the server does not serve, hidden tools' included, are
	// counted as not_found calls, as the dispatcher's own refusals are.
	for _, want := range []string{"db_write", "secret.get", "secret_get"} {
		e := next()
		if r, _ := e.Data.(dispatcher.ResultEvent); r.Tool != want || r.Kind != dispatcher.KindNotFound {
			t.Errorf("dispatch.result %+v, want not_found for %s", e.Data, want)
		}
	}

	// A plan step may name a tool either way, and reaches only what a
	// client may call.
	for _, step := range []struct{ tool, want string }{{"save_row", "completed"}, {"db.write", "completed"}, {"secret.get", "failed"}} {
		calls.reset()
		p := &mcp.CallToolParams{Name: "toolhost.plan", Arguments: json.RawMessage(
			`{"goal":"g","steps":[{"id":1,"tool_name":"` + step.tool + `","args":{}}]}`)}
		res, err := cs.CallTool(context.Background(), p)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(res.StructuredContent)
		var sr struct{ Status string }
		_ = json.Unmarshal(b, &sr)
		if sr.Status != step.want {
			t.Errorf("plan step %s: status %q, want %q (%s)", step.tool, sr.Status, step.want, b)
		}
		if step.want == "failed" && slices.Contains(calls.get(), "secret.get") {
			t.Errorf("a plan step ran the hidden tool")
		}
	}

	// A reload keeps the views: the new registry's names are what clients
	// see and call.
	renamed := viewTools(t, &calls)
	renamed[0].WireName = "count_words"
	renamed[2].Hidden = false
	reg2, err := registry.New(renamed)
	if err != nil {
		t.Fatal(err)
	}
	srv.SetTools(reg2)
	names = nil
	for n := range listed(t, cs) {
		names = append(names, n)
	}
	slices.Sort(names)
	if want := []string{"count_words", "save_row", "secret_get", "toolhost_plan"}; !slices.Equal(names, want) {
		t.Errorf("after SetTools: tools/list = %v, want %v", names, want)
	}
	if got := kind(call("text_count", nil)); got != "not_found" {
		t.Errorf("old wire name after the rename: %s, want not_found", got)
	}
	if got := kind(call("count_words", nil)); got != "ok" {
		t.Errorf("new wire name: %s", got)
	}
}

func TestExactNames(t *testing.T) {
	var calls ran
	tools := viewTools(t, &calls)
	tools[0].WireName = tools[0].Name // what the loader does under --tool-names=exact
	reg, err := registry.New(tools)
	if err != nil {
		t.Fatal(err)
	}
	srv := transport.New(dispatcher.New(reg, dispatcher.Config{}), reg, transport.Options{
		Logger: slog.New(slog.DiscardHandler), Plans: &transport.PlanOptions{}, ExactNames: true,
	})
	cs := httpClient(t, srv)
	tools2 := listed(t, cs)
	for _, want := range []string{"text.count", "toolhost.plan", "save_row"} {
		if _, ok := tools2[want]; !ok {
			t.Errorf("%s not listed: %v", want, tools2)
		}
	}
	if tl := tools2["toolhost.plan"]; tl != nil && tl.Meta[transport.MetaToolName] != "toolhost.plan" {
		t.Errorf("toolhost.plan _meta %v", tl.Meta)
	}
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "toolhost_plan",
		Arguments: json.RawMessage(`{"goal":"g","steps":[{"id":1,"tool_name":"text.count","args":{}}]}`)})
	if err != nil || res.IsError {
		t.Fatalf("toolhost_plan under exact names: %v %+v", err, res)
	}
}
