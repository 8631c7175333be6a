package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/cobra"
	"github.com/toolhost/toolhost/dispatcher"
)

const defaultServer = "http://127.0.0.1:7331/mcp"

// addServerFlag adds --server, defaulting to $TOOLHOST_URL, then the
// default address of `toolhost serve`.
func addServerFlag(cmd *cobra.Command, dst *string) {
	def := os.Getenv("TOOLHOST_URL")
	if def == "" {
		def = defaultServer
	}
	cmd.Flags().StringVar(dst, "server", def, "MCP endpoint of a running toolhost serve ($TOOLHOST_URL)")
}

// connect opens an MCP session to url. Reconnection retries are off: a
// shell command should fail fast when the server is not there.
func connect(ctx context.Context, url string) (*mcp.ClientSession, error) {
	client := mcp.NewClient(&mcp.Implementation{Name: "toolhost-cli", Version: version}, nil)
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url, MaxRetries: -1, DisableStandaloneSSE: true}, nil)
	if err != nil {
		return nil, fmt.Errorf("cannot reach toolhost at %s (is `toolhost serve` running?): %w", url, err)
	}
	return cs, nil
}

// writeEnvelope writes a DispatchError as one JSON object and a newline.
func writeEnvelope(w io.Writer, de *dispatcher.DispatchError) {
	b, _ := json.Marshal(de)
	fmt.Fprintf(w, "%s\n", b)
}

// clientFault is the envelope for a failure on the way to the tool: no
// server, a broken connection, a protocol error.
func clientFault(err error) *dispatcher.DispatchError {
	return &dispatcher.DispatchError{Kind: dispatcher.KindInternal, Message: err.Error(),
		JSONRPCCode: dispatcher.KindInternal.Code()}
}
