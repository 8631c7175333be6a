package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/cobra"
	"github.com/toolhost/toolhost/dispatcher"
	"github.com/toolhost/toolhost/transport"
)

type callFlags struct {
	server   string
	timeout  time.Duration
	key      string
	budget   int
	priority string
	task     bool
}

func newCallCmd() *cobra.Command {
	var f callFlags
	cmd := &cobra.Command{
		Use:   "call [flags] NAME [ARGS_JSON|-]",
		Short: "Call a tool on a running server",
		Long: `call invokes one tool through a running 'toolhost serve'. ARGS_JSON defaults to
{}; '-' reads it from stdin. On success the result is printed as JSON on stdout
and the exit code is 0. On failure the error envelope
{"kind","message","attempts","jsonrpc_code"} is printed as one JSON object on
stderr and the exit code is 1.`,
		Example: `  toolhost call text_count '{"text":"a b c"}'
  toolhost call text.count '{"text":"a b c"}'    # the manifest name works too
  echo '{"expr":"2^10"}' | toolhost call math.eval -
  toolhost call --timeout 2s --idempotency-key order-42 hash.sha256 '{"text":"x"}'
  toolhost call --task web.fetch '{"url":"https://example.com"}'   # run as an MCP task, polling`,
		Args: cobra.RangeArgs(1, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runCall(cmd, f, args)
		},
	}
	addServerFlag(cmd, &f.server)
	cmd.Flags().DurationVar(&f.timeout, "timeout", 0, "per-attempt timeout (toolhost/timeout_ms): shortens the tool's; longer only as far as the server's max_timeout allows")
	cmd.Flags().StringVar(&f.key, "idempotency-key", "", "deduplicate: calls with one key share one execution")
	cmd.Flags().IntVar(&f.budget, "budget", -1, "attempts you can afford (toolhost/budget); 0 fails fast; default: no budget")
	cmd.Flags().StringVar(&f.priority, "priority", "", "governor priority class: critical, interactive, normal or background (toolhost/priority)")
	cmd.Flags().BoolVar(&f.task, "task", false, "run it as an MCP task: start it, poll with a progress line on stderr, print the result; Ctrl-C cancels it (docs/PROTOCOL.md, Tasks)")
	return cmd
}

func runCall(cmd *cobra.Command, f callFlags, args []string) error {
	fail := func(de *dispatcher.DispatchError) error {
		writeEnvelope(cmd.ErrOrStderr(), de)
		return &exitError{code: 1}
	}
	raw, err := readArgs(cmd.InOrStdin(), args)
	if err != nil {
		return fail(&dispatcher.DispatchError{Kind: dispatcher.KindSchema, Message: err.Error(), JSONRPCCode: dispatcher.CodeInvalidParams})
	}
	meta := mcp.Meta{}
	if f.timeout > 0 {
		meta[transport.MetaTimeoutMS] = max(f.timeout.Milliseconds(), 1)
	}
	if f.key != "" {
		meta[transport.MetaIdempotencyKey] = f.key
	}
	if f.budget >= 0 {
		meta[transport.MetaBudget] = f.budget
	}
	if f.priority != "" {
		meta[transport.MetaPriority] = f.priority
	}
	ctx := cmd.Context()
	if f.task {
		return runCallTask(cmd, f, args[0], raw, meta)
	}
	cs, err := connect(ctx, f.server)
	if err != nil {
		return fail(clientFault(err))
	}
	defer cs.Close()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: args[0], Arguments: raw, Meta: meta})
	if err != nil {
		return fail(clientFault(err))
	}
	if res.IsError {
		return fail(envelopeOf(res))
	}
	out, err := resultJSON(res)
	if err != nil {
		return fail(clientFault(err))
	}
	fmt.Fprintf(cmd.OutOrStdout(), "%s\n", safeJSON(out))
	return nil
}

// readArgs returns the call's arguments as a JSON object: {} when absent,
// stdin for "-".
func readArgs(stdin io.Reader, args []string) (json.RawMessage, error) {
	if len(args) < 2 {
		return json.RawMessage("{}"), nil
	}
	b := []byte(args[1])
	if args[1] == "-" {
		var err error
		if b, err = io.ReadAll(stdin); err != nil {
			return nil, fmt.Errorf("reading arguments from stdin: %w", err)
		}
	}
	b = bytes.TrimSpace(b)
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(b, &obj); err != nil || obj == nil {
		return nil, errors.New("ARGS_JSON must be a JSON object, e.g. '{\"text\":\"a b c\"}'")
	}
	return b, nil
}

// envelopeOf digs the DispatchError out of an isError result; a server that
// is not toolhost gets its text content as the message.
func envelopeOf(res *mcp.CallToolResult) *dispatcher.DispatchError {
	if raw, ok := res.Meta[transport.MetaError]; ok {
		b, _ := json.Marshal(raw)
		var de dispatcher.DispatchError
		if json.Unmarshal(b, &de) == nil && de.Kind != "" {
			return &de
		}
	}
	msg := "the tool reported an error"
	for _, c := range res.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			msg = t.Text
		}
	}
	return clientFault(errors.New(msg))
}

// resultJSON prefers structured content and falls back to the text.
func resultJSON(res *mcp.CallToolResult) ([]byte, error) {
	if res.StructuredContent != nil {
		return json.Marshal(res.StructuredContent)
	}
	for _, c := range res.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			return []byte(t.Text), nil
		}
	}
	return []byte("null"), nil
}
