// Package transport serves the dispatcher over MCP (the official Go SDK):
// stdio and Streamable HTTP. It maps tools/call onto a dispatch and every
// failed dispatch onto an isError result carrying the envelope; it knows
// nothing of retries, timeouts or WebAssembly.
package transport

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"math"
	"net/http"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolhost/toolhost/access"
	"github.com/toolhost/toolhost/dispatcher"
	"github.com/toolhost/toolhost/registry"
	"go.opentelemetry.io/otel/trace"
)

// name is the server name reported to MCP clients.
const name = "toolhost"

// Options configure a Server. The zero value is usable.
type Options struct {
	// Version is reported to clients in the initialize handshake; empty
	// means "dev".
	Version string
	// Logger receives the audit log (one line per call) and protocol
	// warnings; nil means slog.Default.
	Logger *slog.Logger
	// AuditArgs adds argument values to the audit log. Off by default:
	// arguments may carry secrets.
	AuditArgs bool
	// MaxArgsBytes refuses calls whose arguments are larger (a schema
	// error); 0 means no limit beyond the request body's.
	MaxArgsBytes int
	// MaxCallsPerCaller caps one caller's calls in flight (rate_limited
	// beyond it); 0 means no cap. Each toolhost.plan step counts too,
	// waiting for a place (see stepSlots).
	MaxCallsPerCaller int
	// MaxSessions caps concurrent MCP sessions over HTTP (new sessions get
	// HTTP 503 beyond it); 0 means no cap.
	MaxSessions int
	// MaxSessionsPerCaller caps one caller's (one token identity's)
	// concurrent MCP sessions over HTTP, so that one client cannot take
	// every slot (new sessions get HTTP 429 beyond it); 0 means no cap.
	MaxSessionsPerCaller int
	// MaxStreamsPerCaller caps one caller's 2026-07-28 (stateless) HTTP
	// requests open at once, subscriptions/listen streams included (HTTP
	// 429 beyond it): the per-caller form of MaxSessions and
	// MaxSessionsPerCaller, which count 2025 sessions only. 0 means no cap.
	MaxStreamsPerCaller int
	// MaxBodyBytes caps an HTTP request body, and a line on stdio; 0 means
	// the SDK's default (on stdio, DefaultMaxLineBytes).
	MaxBodyBytes int64
	// SessionTimeout closes HTTP sessions idle this long (so abandoned
	// sessions do not hold MaxSessions slots); 0 means never.
	SessionTimeout time.Duration
	// Plans, when set, lists the built-in tool toolhost.plan, which runs
	// plan sessions on the server (see PlanToolName); nil means none.
	Plans *PlanOptions
	// ExactNames lists toolhost.plan under its manifest name rather than
	// PlanWireName (serve --tool-names=exact; the registry records carry
	// the other tools' wire names). Calls accept either name regardless.
	ExactNames bool
	// Access decides which tools each caller may see and call (see
	// access.go); nil allows every caller every tool.
	Access *access.Policy
	// TracerProvider makes a span per tools/call and per toolhost.plan
	// step (see tracing.go); nil means none.
	TracerProvider trace.TracerProvider
	// Tasks configures MCP Tasks (see tasks.go); served whenever the
	// dispatcher's idempotency store keeps tasks, as both of toolhost's do.
	Tasks TaskOptions
	// ListMeta, when set, is asked at every tools/list for live facts
	// about the tools, by manifest name, added to each listed tool's
	// _meta (see listmeta.go); nil adds none.
	ListMeta func() map[string]map[string]any
	// Loading, when set, says what of the tools is not listed yet because
	// its module still compiles (see loading.go); nil: nothing ever is.
	Loading Loading
	// Input configures tools' input requests (see input.go); its keys
	// must pass CheckInputKeys.
	Input InputOptions
}

// Server is an MCP server over one dispatcher and the tools it serves. It is
// safe for concurrent use.
type Server struct {
	d        *dispatcher.Dispatcher
	mcp      *mcp.Server
	logger   *slog.Logger
	opts     Options
	inflight inflight
	callers  callerLimit
	streams  callerLimit // stateless requests open, per caller

	toolsMu sync.Mutex
	reg     *registry.Registry        // the registry of the last SetTools
	listed  map[string]*registry.Tool // what tools/list shows, by wire name
	offers  offerSet                  // the resources and prompts listed (resources.go)

	told toldSessions // sessions told at initialize of resources or prompts (offertold.go)

	slots sessionSlots // MaxSessions and MaxSessionsPerCaller (see openSession)

	tracer trace.Tracer // nil: tracing off

	taskRuns taskRuns   // MCP tasks running here (tasks.go)
	pushes   taskPushes // questions of parked tasks asked on their session (taskpush.go)

	sealer *stateSealer // signs and opens input requestStates (inputstate.go)

	endedInputs endedInputs // stdio sessions whose client closed stdin (stdioeof.go)
}

// New builds the MCP server: every tool in reg that is not hidden is listed
// (by its wire name, with its manifest name in _meta["toolhost/name"] and
// idempotentHint and readOnlyHint from its record), and every tools/call of
// a listed tool, by either name, goes through d.
func New(d *dispatcher.Dispatcher, reg *registry.Registry, opts Options) *Server {
	if opts.Version == "" {
		opts.Version = "dev"
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	s := &Server{
		d:       d,
		logger:  opts.Logger,
		opts:    opts,
		callers: callerLimit{max: opts.MaxCallsPerCaller},
		streams: callerLimit{max: opts.MaxStreamsPerCaller},
		tracer:  newTracer(opts.TracerProvider),
		mcp: mcp.NewServer(&mcp.Implementation{Name: name, Version: opts.Version},
			// The SDK logs every session connect and disconnect at Info;
			// only its warnings are worth a line in our log.
			&mcp.ServerOptions{Logger: slog.New(warnOnly{opts.Logger.Handler()})}),
	}
	// The SDK answers a call to an unlisted tool with its own JSON-RPC
	// -32602 before any tool handler runs. The contract wants an isError
	// result carrying a not_found envelope instead, so tools/call is taken
	// over here, ahead of the SDK's lookup (see protocolMiddleware).
	s.addListMeta()
	s.addStartWait()
	s.mcp.AddReceivingMiddleware(s.protocolMiddleware)
	s.addAccess()
	// Last, so outermost: a result takes its revision's shape after the
	// others (access filtering included) have made it.
	s.mcp.AddReceivingMiddleware(revisionShape)
	s.addTasks() // outside revisionShape: it adds taskSupport to its tools/list
	s.mcp.AddReceivingMiddleware(properErrors)
	s.mcp.AddReceivingMiddleware(growStack) // outermost: before any of the others runs
	s.sealer = mustSealer(opts.Input, opts.Logger)
	s.SetTools(reg)
	s.addPlanTool()
	return s
}

// SetTools makes the listed tools those of reg that are not hidden: tools
// gone are removed, new or changed ones (re)added. Each change sends MCP
// clients notifications/tools/list_changed. reg's resources, resource
// templates and prompts are listed the same way (resources.go). Calls resolve names (wire or
// manifest) against reg from now on, then go through the dispatcher, which
// has its own view of the registry.
func (s *Server) SetTools(reg *registry.Registry) {
	s.toolsMu.Lock()
	defer s.toolsMu.Unlock()
	next := make(map[string]*registry.Tool, len(reg.List()))
	for _, t := range reg.List() {
		if !t.Hidden {
			next[t.WireName] = t
		}
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
		if !t.Hidden && s.listed[t.WireName] != t {
			s.mcp.AddTool(mcpTool(t), s.callTool)
		}
	}
	s.listed = next
	s.reg = reg
	s.setOffers(reg.Offers())
}

// lookup resolves a name a client sent, wire or manifest form, to a tool
// it may call: listed, not hidden.
func (s *Server) lookup(name string) (*registry.Tool, bool) {
	s.toolsMu.Lock()
	defer s.toolsMu.Unlock()
	t, ok := s.reg.Resolve(name)
	if !ok || t.Hidden {
		return nil, false
	}
	return t, true
}

func mcpTool(t *registry.Tool) *mcp.Tool {
	tool := &mcp.Tool{
		// toolhost's own facts about the tool, for `toolhost list` and
		// curious clients; MCP has no fields for them.
		Meta: mcp.Meta{
			MetaToolTimeoutMS: t.Timeout.Milliseconds(),
			MetaToolModule:    t.Module,
			MetaToolName:      t.Name,
			MetaToolInstances: instanceMode(t),
		},
		Name:        wireName(t),
		Title:       t.Title,
		Description: t.Description,
		InputSchema: json.RawMessage(t.InputSchema),
		Annotations: &mcp.ToolAnnotations{
			Title:           t.Title,
			IdempotentHint:  t.Idempotent,
			ReadOnlyHint:    t.ReadOnly,
			DestructiveHint: new(t.Destructive),
			OpenWorldHint:   new(t.OpenWorld),
		},
		Icons: mcpIcons(t.Icons),
	}
	if len(t.OutputSchema) > 0 {
		tool.OutputSchema = json.RawMessage(t.OutputSchema)
	}
	return tool
}

// wireName is t's listed name; records built outside registry.New (as
// CheckTool may get) have none yet.
func wireName(t *registry.Tool) string {
	if t.WireName == "" {
		return registry.SafeName(t.Name)
	}
	return t.WireName
}

// MCP returns the underlying SDK server, to connect other transports.
func (s *Server) MCP() *mcp.Server { return s.mcp }

// HTTPHandler returns the Streamable HTTP handler to mount at /mcp: 2025
// clients get sessions, 2026-07-28 clients the stateless core (see
// front). The SDK's DNS-rebinding protection for localhost stays on. Wrap
// it with Tokens.Require to demand bearer tokens, and the mux it is mounted
// on with Origins.Guard to refuse foreign origins and hosts on every
// endpoint.
func (s *Server) HTTPHandler() http.Handler {
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s.mcp }, &mcp.StreamableHTTPOptions{
		Logger:              s.logger,
		MaxRequestBodyBytes: s.opts.MaxBodyBytes,
		SessionTimeout:      s.opts.SessionTimeout,
	})
	maxBody := s.opts.MaxBodyBytes
	switch {
	case maxBody == 0:
		maxBody = mcp.DefaultMaxRequestBodyBytes
	case maxBody < 0: // the SDK's "no limit"
		maxBody = math.MaxInt64
	}
	return &front{s: s, sessions: rpcErrorBodies(s.limitSessions(newCancelFilter(s.opts.MaxBodyBytes).wrap(h))),
		stateless: s.callerLimited(rpcErrorBodies(s.statelessHandler())), maxBody: maxBody}
}

// limitSessions answers a request that would open one session too many
// with HTTP 503 (429 when it is one too many for its caller) and a
// JSON-RPC error saying so. A request without an Mcp-Session-Id header is
// an initialize: it opens a session.
func (s *Server) limitSessions(h http.Handler) http.Handler {
	if s.opts.MaxSessions <= 0 && s.opts.MaxSessionsPerCaller <= 0 {
		return h
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.Header.Get("Mcp-Session-Id") != "" {
			h.ServeHTTP(w, r)
			return
		}
		caller := httpCaller(r)
		if status, why := s.openSession(caller); status != 0 {
			w.Header().Set("Retry-After", "5")
			writeRPCError(w, status, -32603, why)
			return
		}
		// The request stops counting as opening once its answer starts:
		// by then its session is initialized (and counted as such) or it
		// failed. Later would count one session twice while the client
		// already has its answer.
		ow := &openingWriter{ResponseWriter: w}
		ow.done = func() { s.opened(caller, ow.Header().Get("Mcp-Session-Id")) }
		defer ow.finish()
		h.ServeHTTP(ow, r)
	})
}

// openingWriter calls done once, when the answer starts or the handler
// returns, whichever is first.
type openingWriter struct {
	http.ResponseWriter
	done func()
	once sync.Once
}

func (w *openingWriter) finish() { w.once.Do(w.done) }

func (w *openingWriter) WriteHeader(code int) {
	w.finish()
	w.ResponseWriter.WriteHeader(code)
}

func (w *openingWriter) Write(p []byte) (int, error) {
	w.finish()
	return w.ResponseWriter.Write(p)
}

// Flush keeps streaming answers (SSE) working through the wrapper.
func (w *openingWriter) Flush() {
	w.finish()
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap lets http.ResponseController reach the real writer.
func (w *openingWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// warnOnly drops records below Warn.
type warnOnly struct{ slog.Handler }

func (w warnOnly) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= slog.LevelWarn && w.Handler.Enabled(ctx, l)
}

// CheckTool reports whether t can be listed over MCP: the SDK's AddTool
// panics on schemas it refuses (e.g. a misplaced x-mcp-header), which in
// a running server would take the process down on a hot reload. Pass it as
// loader.Options.Check so such a module is refused like any load error.
func CheckTool(t *registry.Tool) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("the MCP SDK refuses its listing: %v", r)
		}
	}()
	scratch := mcp.NewServer(&mcp.Implementation{Name: "check", Version: "0"}, &mcp.ServerOptions{
		Logger: slog.New(slog.DiscardHandler),
	})
	scratch.AddTool(mcpTool(t), func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) { return nil, nil })
	return nil
}
