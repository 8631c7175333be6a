// Command mcpgo drives a toolhost server with mark3labs/mcp-go's client, a
// widely used third-party Go MCP client, over Streamable HTTP: initialize,
// list the tools, call text_count and an unknown tool. cmd/toolhost's
// TestMCPGoClient runs it (`go run .` here, with the /mcp URL as its
// argument) and reads the one JSON line it prints. It is a module of its
// own so that mcp-go stays out of the server's dependencies.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
)

type report struct {
	Protocol string          `json:"protocol"`
	Tools    []string        `json:"tools"`
	Call     json.RawMessage `json:"call"`
	Unknown  json.RawMessage `json:"unknown"`
	Error    string          `json:"error,omitempty"`
}

func main() {
	r, err := run(os.Args[1])
	if err != nil {
		r.Error = err.Error()
	}
	b, _ := json.Marshal(r)
	fmt.Println(string(b))
}

func run(url string) (report, error) {
	var r report
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c, err := client.NewStreamableHttpClient(url)
	if err != nil {
		return r, err
	}
	defer c.Close()
	if err := c.Start(ctx); err != nil {
		return r, err
	}
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
	init.Params.ClientInfo = mcp.Implementation{Name: "toolhost-conformance-mcpgo", Version: "1.0.0"}
	res, err := c.Initialize(ctx, init)
	if err != nil {
		return r, fmt.Errorf("initialize: %w", err)
	}
	r.Protocol = res.ProtocolVersion
	tools, err := c.ListTools(ctx, mcp.ListToolsRequest{})
	if err != nil {
		return r, fmt.Errorf("tools/list: %w", err)
	}
	for _, t := range tools.Tools {
		r.Tools = append(r.Tools, t.Name)
	}
	call := func(name string, args map[string]any) (json.RawMessage, error) {
		req := mcp.CallToolRequest{}
		req.Params.Name, req.Params.Arguments = name, args
		out, err := c.CallTool(ctx, req)
		if err != nil {
			return nil, fmt.Errorf("tools/call %s: %w", name, err)
		}
		return json.Marshal(out)
	}
	if r.Call, err = call("text_count", map[string]any{"text": "a b c"}); err != nil {
		return r, err
	}
	r.Unknown, err = call("no_such_tool", map[string]any{})
	return r, err
}
