package main

import (
	"context"
	"encoding/json"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolhost/toolhost/dispatcher"
	"github.com/toolhost/toolhost/transport"
)

func callTool(t *testing.T, cs *mcp.ClientSession, name string, args any, meta mcp.Meta) *mcp.CallToolResult {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args, Meta: meta})
	if err != nil {
		t.Fatalf("tools/call %s: protocol error %v (tool failures must be isError results)", name, err)
	}
	return res
}

// envelope returns the DispatchError of an isError result.
func envelope(t *testing.T, res *mcp.CallToolResult) dispatcher.DispatchError {
	t.Helper()
	if !res.IsError {
		t.Fatalf("expected an isError result, got %+v", res)
	}
	b, _ := json.Marshal(res.Meta[transport.MetaError])
	var de dispatcher.DispatchError
	if err := json.Unmarshal(b, &de); err != nil || de.Kind == "" {
		t.Fatalf("no envelope in _meta: %s", b)
	}
	text := res.Content[0].(*mcp.TextContent).Text
	if !strings.Contains(text, string(de.Kind)) || !strings.Contains(text, de.Message) {
		t.Fatalf("text content %q must name the kind and message", text)
	}
	return de
}

func TestE2EHTTP(t *testing.T) {
	srv := startServer(t, pluginsDir(t))
	cs := srv.client(t)

	t.Run("list", func(t *testing.T) {
		res, err := cs.ListTools(context.Background(), nil)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, tool := range res.Tools {
			names = append(names, tool.Name)
		}
		if !slices.IsSorted(names) {
			t.Fatalf("tools/list is not in a deterministic (sorted) order: %v", names)
		}
		// Listed by client-safe wire name (docs: names on the wire).
		for _, want := range []string{"text_count", "math_eval", "sleep", "wat_echo"} {
			if !slices.Contains(names, want) {
				t.Fatalf("%s missing from %v", want, names)
			}
		}
		for _, tool := range res.Tools {
			if tool.Name == "text_count" && (tool.Annotations == nil || !tool.Annotations.IdempotentHint || !tool.Annotations.ReadOnlyHint) {
				t.Fatalf("text.count annotations %+v, want idempotent and read-only hints", tool.Annotations)
			}
			if tool.Name == "sleep" && (tool.Annotations.IdempotentHint || tool.Annotations.ReadOnlyHint) {
				t.Fatalf("sleep annotations %+v, want no hints", tool.Annotations)
			}
		}
	})

	t.Run("call", func(t *testing.T) {
		res := callTool(t, cs, "text.count", map[string]any{"text": "a b c"}, nil)
		if res.IsError {
			t.Fatalf("error: %+v", res.Content)
		}
		b, _ := json.Marshal(res.StructuredContent)
		var got struct{ Words int }
		if err := json.Unmarshal(b, &got); err != nil || got.Words != 3 {
			t.Fatalf("structuredContent %s, want words=3", b)
		}
		if text := res.Content[0].(*mcp.TextContent).Text; !strings.Contains(text, `"words":3`) {
			t.Fatalf("text content %q must carry the JSON too", text)
		}
	})

	t.Run("wat module without the SDK", func(t *testing.T) {
		res := callTool(t, cs, "wat.echo", map[string]any{"hello": "world"}, nil)
		b, _ := json.Marshal(res.StructuredContent)
		if res.IsError || string(b) != `{"hello":"world"}` {
			t.Fatalf("wat.echo: %s (isError=%v)", b, res.IsError)
		}
	})

	errorCases := []struct {
		name string
		tool string
		args any
		meta mcp.Meta
		kind dispatcher.Kind
		code int
	}{
		{"unknown tool", "no.such.tool", map[string]any{}, nil, dispatcher.KindNotFound, -32601},
		{"schema", "text.count", map[string]any{"text": 5}, nil, dispatcher.KindSchema, -32602},
		{"bad _meta", "text.count", map[string]any{"text": "x"}, mcp.Meta{transport.MetaTimeoutMS: -1}, dispatcher.KindSchema, -32602},
		{"timeout while sleeping", "sleep", map[string]any{"ms": 60000}, mcp.Meta{transport.MetaTimeoutMS: 200}, dispatcher.KindTimeout, -32603},
		{"infinite loop", "spin", map[string]any{}, mcp.Meta{transport.MetaTimeoutMS: 200}, dispatcher.KindTimeout, -32603},
		{"trap", "trap", map[string]any{}, nil, dispatcher.KindInternal, -32603},
		{"exit", "exit", map[string]any{"code": 3}, nil, dispatcher.KindInternal, -32603},
		{"memory grab", "grow", map[string]any{}, nil, dispatcher.KindInternal, -32603},
		{"huge output", "huge", map[string]any{"n": 2 << 20}, nil, dispatcher.KindInternal, -32603},
		{"stack overflow", "recurse", map[string]any{}, nil, dispatcher.KindInternal, -32603},
	}
	for _, tc := range errorCases {
		t.Run(tc.name, func(t *testing.T) {
			de := envelope(t, callTool(t, cs, tc.tool, tc.args, tc.meta))
			if de.Kind != tc.kind || de.JSONRPCCode != tc.code {
				t.Fatalf("got %+v, want kind %s code %d", de, tc.kind, tc.code)
			}
			// The server keeps serving after every failure.
			if res := callTool(t, cs, "text.count", map[string]any{"text": "still here"}, nil); res.IsError {
				t.Fatalf("server stopped serving after %s", tc.name)
			}
		})
	}

	t.Run("cli call", func(t *testing.T) {
		out, errOut, code := srv.cli(t, "call", "text.count", `{"text":"a b c"}`)
		if code != 0 || !strings.Contains(out, `"words":3`) {
			t.Fatalf("exit %d, stdout %q, stderr %q", code, out, errOut)
		}
		out, errOut, code = srv.cli(t, "call", "--timeout", "150ms", "sleep", `{"ms":60000}`)
		var de dispatcher.DispatchError
		if code == 0 || out != "" || json.Unmarshal([]byte(errOut), &de) != nil || de.Kind != dispatcher.KindTimeout {
			t.Fatalf("exit %d, stdout %q, stderr %q; want the timeout envelope as JSON on stderr", code, out, errOut)
		}
		_, errOut, code = srv.cli(t, "call", "nope")
		if code == 0 || !strings.Contains(errOut, `"kind":"not_found"`) {
			t.Fatalf("exit %d, stderr %q", code, errOut)
		}
	})

	t.Run("cli list", func(t *testing.T) {
		out, errOut, code := srv.cli(t, "list", "--json")
		var rows []struct {
			Name       string
			Idempotent bool
			ReadOnly   bool `json:"read_only"`
		}
		if code != 0 || json.Unmarshal([]byte(out), &rows) != nil || len(rows) < 10 {
			t.Fatalf("exit %d, stdout %q, stderr %q", code, out, errOut)
		}
	})
}

func TestE2EStdio(t *testing.T) {
	bin := buildCLI(t)
	cmd := exec.Command(bin, "serve", "--stdio", "--plugins", pluginsDir(t))
	c := mcp.NewClient(&mcp.Implementation{Name: "e2e-stdio", Version: "test"}, nil)
	cs, err := c.Connect(context.Background(), &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	tools, err := cs.ListTools(context.Background(), nil)
	if err != nil || len(tools.Tools) < 10 {
		t.Fatalf("tools/list over stdio: %v, %d tools", err, len(tools.Tools))
	}
	res := callTool(t, cs, "math.eval", map[string]any{"expr": "2^10"}, nil)
	b, _ := json.Marshal(res.StructuredContent)
	if res.IsError || !strings.Contains(string(b), "1024") {
		t.Fatalf("math.eval over stdio: %s", b)
	}
	if de := envelope(t, callTool(t, cs, "nope", map[string]any{}, nil)); de.Kind != dispatcher.KindNotFound {
		t.Fatalf("got %+v", de)
	}
}
