package main

import (
	"context"
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// countArgs and counts are text.count's input and output
// (tools-src/text), so the floor validates and returns the same shapes.
type countArgs struct {
	Text string `json:"text" jsonschema:"the text to measure"`
}

type counts struct {
	Words int `json:"words"`
	Lines int `json:"lines"`
	Runes int `json:"runes"`
	Bytes int `json:"bytes"`
}

// count is tools-src/text's count, in plain Go.
func count(a countArgs) counts {
	lines := strings.Count(a.Text, "\n")
	if a.Text != "" && !strings.HasSuffix(a.Text, "\n") {
		lines++
	}
	return counts{
		Words: len(strings.Fields(a.Text)),
		Lines: lines,
		Runes: utf8.RuneCountInString(a.Text),
		Bytes: len(a.Text),
	}
}

// serveFloor is the transport floor: the Go SDK's server and Streamable
// HTTP handler with text.count as a plain Go handler, no wasm, no
// dispatcher. What toolhost adds on top of this is what the ratio shows.
// stateless serves each request in a short-lived session of its own, as
// toolhost serves 2026-07-28 requests.
func serveFloor(addr string, stateless bool) error {
	s := mcp.NewServer(&mcp.Implementation{Name: "floor", Version: "bench"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "text.count", Description: "Count words, lines and characters"},
		func(_ context.Context, _ *mcp.CallToolRequest, a countArgs) (*mcp.CallToolResult, counts, error) {
			return nil, count(a), nil
		})
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, &mcp.StreamableHTTPOptions{Stateless: stateless})
	mux := http.NewServeMux()
	mux.Handle("/mcp", h)
	return http.ListenAndServe(addr, mux)
}
