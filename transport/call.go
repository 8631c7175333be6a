package transport

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolhost/toolhost/dispatcher"
)

// callTool is the whole tools/call path: options from _meta, one dispatch,
// and the result or envelope as a CallToolResult. Tool failures never
// become JSON-RPC errors: a model must be able to read them.
func (s *Server) callTool(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	s.inflight.enter()
	defer s.inflight.exit()
	p := req.Params
	opts, err := parseOptions(p.Meta)
	if err != nil {
		return errorResult(&dispatcher.DispatchError{Kind: dispatcher.KindSchema, Message: err.Error(),
			JSONRPCCode: dispatcher.KindSchema.Code()}), nil
	}
	res, err := s.d.Call(ctx, dispatcher.Call{Tool: p.Name, Args: p.Arguments, Options: opts})
	if err != nil {
		var de *dispatcher.DispatchError
		if !errors.As(err, &de) {
			de = &dispatcher.DispatchError{Kind: dispatcher.KindInternal, Message: err.Error(),
				JSONRPCCode: dispatcher.KindInternal.Code()}
		}
		return errorResult(de), nil
	}
	out := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(res)}}}
	// MCP defines structuredContent as a JSON object; a tool that returns
	// a number or a list is carried as text only.
	if isObject(res) {
		out.StructuredContent = json.RawMessage(res)
	}
	return out, nil
}

func isObject(b []byte) bool {
	for _, c := range b {
		switch c {
		case ' ', '\t', '\n', '\r':
			continue
		case '{':
			return true
		}
		return false
	}
	return false
}

func errorResult(de *dispatcher.DispatchError) *mcp.CallToolResult {
	return &mcp.CallToolResult{
		IsError: true,
		Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf("toolhost error (%s): %s", de.Kind, de.Message)}},
		Meta:    mcp.Meta{MetaError: de},
	}
}
