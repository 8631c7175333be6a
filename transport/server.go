// Package transport serves the dispatcher over MCP (the official Go SDK):
// stdio and Streamable HTTP. It maps tools/call onto a dispatch and every
// failed dispatch onto an isError result carrying the envelope; it knows
// nothing of retries, timeouts or WebAssembly.
package transport

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolhost/toolhost/dispatcher"
	"github.com/toolhost/toolhost/registry"
)

// name is the server name reported to MCP clients.
const name = "toolhost"

// Options configure a Server. The zero value is usable.
type Options struct {
	// Version is reported to clients in the initialize handshake; empty
	// means "dev".
	Version string
	// Logger receives protocol-level logs; nil means slog.Default.
	Logger *slog.Logger
}

// Server is an MCP server over one dispatcher and the tools it serves. It is
// safe for concurrent use.
type Server struct {
	d        *dispatcher.Dispatcher
	mcp      *mcp.Server
	logger   *slog.Logger
	inflight inflight

	toolsMu sync.Mutex
	listed  map[string]*registry.Tool // what tools/list shows, by name
}

// New builds the MCP server: every tool in reg is listed (by name, with
// idempotentHint and readOnlyHint from its record), and every tools/call,
// for a listed tool or not, goes through d.
func New(d *dispatcher.Dispatcher, reg *registry.Registry, opts Options) *Server {
	if opts.Version == "" {
		opts.Version = "dev"
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	s := &Server{
		d:      d,
		logger: opts.Logger,
		mcp: mcp.NewServer(&mcp.Implementation{Name: name, Version: opts.Version},
			// The SDK logs every session connect and disconnect at Info;
			// only its warnings are worth a line in our log.
			&mcp.ServerOptions{Logger: slog.New(warnOnly{opts.Logger.Handler()})}),
	}
	// The SDK answers a call to an unlisted tool with its own JSON-RPC
	// -32602 before any tool handler runs. The contract wants an isError
	// result carrying a not_found envelope instead, so tools/call is taken
	// over here, ahead of the SDK's lookup.
	s.mcp.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if call, ok := req.(*mcp.CallToolRequest); ok && method == "tools/call" {
				return s.callTool(ctx, call)
			}
			return next(ctx, method, req)
		}
	})
	s.SetTools(reg)
	return s
}

// SetTools makes the listed tools those of reg: tools gone are removed,
// new or changed ones (re)added. Each change sends MCP clients
// notifications/tools/list_changed. Calls are unaffected: they always go
// through the dispatcher, which has its own view of the registry.
func (s *Server) SetTools(reg *registry.Registry) {
	s.toolsMu.Lock()
	defer s.toolsMu.Unlock()
	next := make(map[string]*registry.Tool, len(reg.List()))
	for _, t := range reg.List() {
		next[t.Name] = t
	}
	var gone []string
	for name := range s.listed {
		if _, ok := next[name]; !ok {
			gone = append(gone, name)
		}
	}
	if len(gone) > 0 {
		s.mcp.RemoveTools(gone...)
	}
	for _, t := range reg.List() {
		if s.listed[t.Name] != t {
			s.mcp.AddTool(mcpTool(t), s.callTool)
		}
	}
	s.listed = next
}

func mcpTool(t *registry.Tool) *mcp.Tool {
	tool := &mcp.Tool{
		// toolhost's own facts about the tool, for `toolhost list` and
		// curious clients; MCP has no fields for them.
		Meta: mcp.Meta{
			MetaToolTimeoutMS: t.Timeout.Milliseconds(),
			MetaToolModule:    t.Module,
		},
		Name:        t.Name,
		Title:       t.Title,
		Description: t.Description,
		InputSchema: json.RawMessage(t.InputSchema),
		Annotations: &mcp.ToolAnnotations{
			Title:          t.Title,
			IdempotentHint: t.Idempotent,
			ReadOnlyHint:   t.ReadOnly,
		},
	}
	if len(t.OutputSchema) > 0 {
		tool.OutputSchema = json.RawMessage(t.OutputSchema)
	}
	return tool
}

// MCP returns the underlying SDK server, to connect other transports.
func (s *Server) MCP() *mcp.Server { return s.mcp }

// HTTPHandler returns the Streamable HTTP handler to mount at /mcp. The
// SDK's DNS-rebinding protection for localhost stays on.
func (s *Server) HTTPHandler() http.Handler {
	return s.inflight.wrap(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s.mcp }, &mcp.StreamableHTTPOptions{
		Logger: s.logger,
	}))
}

// ServeStdio speaks MCP on stdin and stdout until the client disconnects
// or ctx ends.
func (s *Server) ServeStdio(ctx context.Context) error {
	return s.mcp.Run(ctx, &mcp.StdioTransport{})
}

// warnOnly drops records below Warn.
type warnOnly struct{ slog.Handler }

func (w warnOnly) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= slog.LevelWarn && w.Handler.Enabled(ctx, l)
}
