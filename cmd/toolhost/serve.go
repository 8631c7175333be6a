package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	"github.com/spf13/cobra"
	"github.com/toolhost/toolhost/dispatcher"
	"github.com/toolhost/toolhost/events"
	"github.com/toolhost/toolhost/governor"
	"github.com/toolhost/toolhost/host"
	"github.com/toolhost/toolhost/internal/config"
	"github.com/toolhost/toolhost/internal/console"
	"github.com/toolhost/toolhost/internal/metrics"
	"github.com/toolhost/toolhost/internal/oauth"
	"github.com/toolhost/toolhost/loader"
	"github.com/toolhost/toolhost/plan"
	"github.com/toolhost/toolhost/registry"
	"github.com/toolhost/toolhost/transport"
)

type serveFlags struct {
	plugins  string
	addr     string
	stdio    bool
	cacheDir string
	config   string
	watch    bool
	grace    time.Duration

	tokenFile      string
	auditArgs      bool
	maxBody        int64
	maxArgs        int
	maxSessions    int
	maxPerCaller   int
	maxStreams     int
	sessionTimeout time.Duration
	planTool       bool
	planners       string
	toolNames      string
	planMaxSession int
	lazy           lazyFlags // serve_lazy.go

	allowOrigins      []string
	readTimeout       time.Duration
	idleTimeout       time.Duration
	maxConns          int
	maxConnsPerPeer   int
	maxSessionsCaller int

	operators      []string
	eventStreams   int
	eventsPerID    int
	idemKeys       int
	idemKeysPerID  int
	idemBytes      int64
	idemBytesPerID int64

	redis string
	reuse string
}

func newServeCmd() *cobra.Command {
	var f serveFlags
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Serve the tools in the plugins folder over MCP",
		Long: `serve loads every .wasm module in the plugins folder and serves its tools over
MCP: Streamable HTTP at http://ADDR/mcp, or stdin/stdout with --stdio. Logs go
to stderr. The folder is watched: a new or replaced .wasm is loaded and swapped
in while calls in flight finish on the old version; a removed file removes its
tools; a file that fails to load leaves its previous version serving. On
SIGINT or SIGTERM it stops accepting work and lets calls in flight finish, up
to --grace.`,
		Example: `  toolhost serve
  toolhost serve --plugins ./plugins --addr 127.0.0.1:7331
  toolhost serve --stdio          # for Claude Desktop or the MCP Inspector`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runServe(cmd, f)
		},
	}
	cmd.Flags().StringVar(&f.plugins, "plugins", "./plugins", "folder of .wasm tool modules")
	cmd.Flags().StringVar(&f.addr, "addr", "127.0.0.1:7331", "HTTP listen address (Streamable HTTP at /mcp)")
	cmd.Flags().BoolVar(&f.stdio, "stdio", false, "speak MCP on stdin/stdout instead of HTTP")
	cmd.Flags().StringVar(&f.cacheDir, "cache-dir", "", `compilation cache folder (default <user cache dir>/toolhost/wazero; "off" disables)`)
	cmd.Flags().StringVar(&f.config, "config", "", "TOML file: dispatch settings, per-tool overrides, quotas and egress grants (docs/CONFIG.md)")
	cmd.Flags().BoolVar(&f.watch, "watch", true, "reload plugins when files in the folder change (--watch=false to turn off)")
	cmd.Flags().DurationVar(&f.grace, "grace", 10*time.Second, "how long calls in flight may take to finish at shutdown")
	cmd.Flags().StringVar(&f.tokenFile, "token-file", "", "bearer tokens for HTTP, one 'identity:token' per line ($TOOLHOST_TOKENS works too); required off loopback")
	cmd.Flags().BoolVar(&f.auditArgs, "audit-args", false, "log argument values in the audit log, and keep argument and result values in events (off: they may hold secrets)")
	cmd.Flags().Int64Var(&f.maxBody, "max-body", 4<<20, "largest HTTP request body (or stdio line), in bytes")
	cmd.Flags().IntVar(&f.maxArgs, "max-args", 1<<20, "largest tool arguments, in bytes")
	cmd.Flags().IntVar(&f.maxSessions, "max-sessions", 256, "most concurrent MCP sessions over HTTP")
	cmd.Flags().IntVar(&f.maxPerCaller, "max-calls-per-caller", 64, "most calls in flight for one caller (one token identity)")
	cmd.Flags().IntVar(&f.maxStreams, "max-streams-per-caller", 128, "most MCP 2026-07-28 (stateless) requests open at once for one caller, subscriptions/listen included")
	cmd.Flags().DurationVar(&f.sessionTimeout, "session-timeout", 30*time.Minute, "close HTTP sessions idle this long")
	cmd.Flags().BoolVar(&f.planTool, "plan-tool", true, "list the built-in toolhost.plan tool, which runs plans on the server (docs/PLAN.md)")
	cmd.Flags().StringVar(&f.planners, "planners", "", "folder of .wasm planner modules toolhost.plan callers may choose by file name (without .wasm)")
	cmd.Flags().StringVar(&f.reuse, "reuse", "auto", `warm instances: "auto" (tools whose manifest says "instances": "reuse" keep one caller's instances between its calls, unless the config says reuse = false) or "never" (a fresh instance for every call, whatever the manifest says)`)
	cmd.Flags().StringVar(&f.toolNames, "tool-names", "safe", `names tools are listed under: "safe" (text.count as text_count, what every MCP client accepts) or "exact" (manifest names)`)
	addEdgeFlags(cmd, &f)
	addBoundsFlags(cmd, &f)
	f.lazy.register(cmd)
	cmd.Flags().IntVar(&f.planMaxSession, "plan-max-session-bytes", transport.DefaultMaxSessionBytes, "most bytes of arguments and results one toolhost.plan session holds")
	addRedisFlags(cmd, &f)
	return cmd
}

func runServe(cmd *cobra.Command, f serveFlags) error {
	ctx := cmd.Context()
	logger := slog.New(slog.NewJSONHandler(cmd.ErrOrStderr(), nil))
	tokens, err := loadTokens(f)
	if err != nil {
		return err
	}
	tracing, flushTraces, err := startTracing(ctx, logger)
	if err != nil {
		return err
	}
	defer flushTraces()
	if f.reuse != "auto" && f.reuse != "never" {
		return fmt.Errorf(`--reuse must be "auto" (the default: tools whose manifest allows it reuse warm instances per caller, unless the config says reuse = false) or "never" (a fresh instance for every call), not %q`, f.reuse)
	}
	for _, id := range f.operators {
		if err := transport.CheckIdentity(id); err != nil {
			return fmt.Errorf("--operator: %w", err)
		}
	}
	if f.toolNames != "safe" && f.toolNames != "exact" {
		return fmt.Errorf(`--tool-names must be "safe" (the default: client-safe names such as text_count) or "exact" (manifest names such as text.count), not %q`, f.toolNames)
	}
	bus := events.New(events.Options{Logger: logger, Values: f.auditArgs})
	var fl *fleet
	defer func() { fl.Close() }()
	op, err := newOperator(f.config, bus, func(conf *config.Config, g governor.Config) (governor.Config, error) {
		var err error
		fl, err = openFleet(f.redis, conf, idempotencyConfig(f, dispatcher.Config{}).IdempotencyLimits, bus, logger)
		return fl.governorStore(g), err
	})
	if err != nil {
		return err
	}
	defer op.Close()
	cfg, gov := op.conf, op.gov
	if !f.stdio && tokens == nil && cfg.OAuthConfig() == nil && !isLoopback(f.addr) {
		return fmt.Errorf("refusing to serve on %s without authentication: anyone who can reach it could run tools. "+
			"Pass --token-file FILE (lines of identity:token; make one with: echo \"me:$(openssl rand -hex 32)\" > tokens) "+
			"or set TOOLHOST_TOKENS, or configure [auth.oauth], or bind to 127.0.0.1", f.addr)
	}
	hc := op.hostConfig(f.cacheDir, logger)
	f.lazy.fromConfig(cmd, cfg)
	edgeFromConfig(cmd, cfg, &f)
	f.lazy.apply(&hc)
	hc.Reuse.Off = f.reuse == "never"
	rt, err := host.New(ctx, hc)
	if err != nil {
		return err
	}
	defer rt.Close(context.Background())
	lopts := op.loaderOptions(f.toolNames == "exact")
	lopts.Progress, lopts.Check = cmd.ErrOrStderr(), transport.CheckTool
	lopts.OwnersFile = loader.OwnersFileFor(rt.CacheDir(), f.plugins)
	lopts.Background = f.lazy.lazy // serve_lazy.go: listen before cold modules compile
	live, err := loader.Open(ctx, rt, f.plugins, lopts, logger)
	if err != nil {
		return err
	}
	defer live.Close()
	if ctx.Err() != nil {
		return nil // SIGINT or SIGTERM during the start-up compiles (which it ended): stop here
	}
	pending, _ := live.Starting()
	logger.Info("tools loaded", "tools", len(live.Registry().List()), "modules_compiling", pending)
	afterListing(ctx, live, func() {
		for _, name := range cfg.ToolNames() {
			if _, ok := live.Lookup(name); !ok {
				logger.Warn("config names a tool no module serves", "tool", name, "config", f.config)
			}
		}
		warnUnusedGrants(cfg, live, logger)
		op.warnUnusedPrefixes(live.Registry(), logger)
		warnUnmatchedAccess(cfg, live.Registry(), f.planTool, logger)
	})
	if cfg.OAuthConfig() == nil {
		warnOperators(f, tokens, logger)
	} else {
		warnBareOAuthNames(cfg, f.operators, tokens, logger)
	}
	if cfg.OAuthConfig() != nil && f.stdio {
		logger.Warn("[auth.oauth] is for HTTP: over --stdio the client is the process that started the server, and no token is checked")
	}
	warnLiteralSecrets(cfg, f.config, logger)
	d := dispatcher.New(live, fl.dispatcherConfig(dispatcherConfig(cfg, idempotencyConfig(f, dispatcher.Config{Events: bus, Governor: gov,
		TracerProvider: tracing.Provider()}))))
	plans, err := planOptions(ctx, f, rt, bus)
	if err != nil {
		return err
	}
	if plans != nil {
		// A step's result gets the cap a guest's response has.
		plans.MaxResultBytes = int(cfg.HostLimits().OutputBytes)
	}
	policy := accessPolicy(cfg, tokens, f.stdio, logger)
	srv := transport.New(d, live.Registry(), transport.Options{
		Version: version, Logger: logger, AuditArgs: f.auditArgs,
		MaxArgsBytes: f.maxArgs, MaxCallsPerCaller: f.maxPerCaller, MaxStreamsPerCaller: f.maxStreams,
		MaxSessions: f.maxSessions, MaxBodyBytes: f.maxBody, SessionTimeout: f.sessionTimeout,
		Plans: plans, ExactNames: f.toolNames == "exact", MaxSessionsPerCaller: f.maxSessionsCaller,
		Access:         policy,
		TracerProvider: tracing.Provider(),
		Tasks:          transport.TaskOptions{OfferAfter: cfg.TaskOfferAfter()},
		ListMeta:       warmListMeta(rt),
		Loading:        live,
	})
	live.OnChange(srv.SetTools)
	live.OnChange(func(*registry.Registry) { d.ToolsChanged() })
	if f.watch {
		go func() {
			if err := live.Watch(ctx, 0); err != nil {
				logger.Warn("hot reload is off", "err", err)
			}
		}()
	}
	if f.stdio {
		// initialize is answered at once; a tools/list waits for the
		// modules still compiling to be listed (transport.Loading).
		noteStarting(live, logger)
		return serveStdio(ctx, srv, f.grace, logger)
	}
	m := metrics.New(metrics.Gauges{
		InFlight: func() float64 { return float64(live.InFlight()) },
		Tools:    func() float64 { return float64(len(live.Registry().List())) },
		CacheHits: func() float64 {
			h, _ := live.CacheStats()
			return float64(h)
		},
		CacheMisses: func() float64 {
			_, m := live.CacheStats()
			return float64(m)
		},
	})
	go m.Follow(ctx, bus)
	fl.register(m.Registry())
	m.Registry().MustRegister(instanceMetrics(rt, live))
	status := &statusSource{plugins: f.plugins, cfg: cfg, rt: rt, live: live}
	ui := consoleOptions(f, rt, live, d, gov, bus, policy)
	return serveHTTP(ctx, srv, bus, m, tokens, cfg.OAuthConfig(), gov, f, status, ui, readyNote(fl.degraded, rt), logger)
}

// serveStdio runs until the client hangs up or a signal arrives; on a signal
// it drains calls in flight before closing the connection.
func serveStdio(ctx context.Context, srv *transport.Server, grace time.Duration, logger *slog.Logger) error {
	runCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- srv.ServeStdio(runCtx) }()
	select {
	case err := <-done:
		return ignoreClosed(err)
	case <-ctx.Done():
	}
	logger.Info("shutting down", "grace", grace)
	drainCtx, cancelDrain := context.WithTimeout(context.Background(), grace)
	defer cancelDrain()
	if err := srv.Drain(drainCtx); err != nil {
		logger.Warn("calls still in flight at the end of the grace period", "err", err)
	}
	cancel()
	return ignoreClosed(<-done)
}

func serveHTTP(ctx context.Context, srv *transport.Server, bus *events.Bus, m *metrics.Metrics, tokens *transport.Tokens, oc *oauth.Config, gov *governor.Governor, f serveFlags, status *statusSource, ui console.Options, degraded func() string, logger *slog.Logger) error {
	start := status.live
	var ready atomic.Bool
	mux := http.NewServeMux()
	ln, hs, err := edgeServer(mux, f)
	if err != nil {
		return err
	}
	require, err := authGuard(ctx, oc, tokens, ln.Addr(), mux, logger)
	if err != nil {
		ln.Close()
		return err
	}
	mux.Handle("/mcp", require(srv.HTTPHandler()))
	mux.Handle("GET /events", require(bus.Handler(eventStreamOptions(f))))
	mux.Handle("/rpc", require(gov.RPCHandler()))
	mux.Handle("GET /metrics", require(m.Handler()))
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { fmt.Fprintln(w, "ok") })
	mux.HandleFunc("GET /readyz", readyz(&ready, start, degraded, start.Files))
	status.transports = []string{"streamable-http http://" + ln.Addr().String() + "/mcp"}
	mux.Handle("GET /status", require(status.handler()))
	if tokens != nil || oc != nil {
		ui.Auth = require
	}
	c := console.New(ui)
	defer c.Close()
	mux.Handle("/ui", c.Handler())
	mux.Handle("/ui/", c.Handler())
	hs.RegisterOnShutdown(c.CloseStreams)   // live call streams never end by themselves
	hs.RegisterOnShutdown(bus.CloseStreams) // event streams never end by themselves
	served := make(chan error, 1)
	go func() { served <- hs.Serve(ln) }()
	ready.Store(true)
	announceServing(ctx, start, "http://"+ln.Addr().String()+"/mcp", logger)
	select {
	case err := <-served:
		return err
	case <-ctx.Done():
	}
	ready.Store(false)
	logger.Info("shutting down", "grace", f.grace)
	graceCtx, cancel := context.WithTimeout(context.Background(), f.grace)
	defer cancel()
	shutdown := make(chan error, 1)
	go func() { shutdown <- hs.Shutdown(graceCtx) }() // stops accepting now
	if err := srv.Drain(graceCtx); err != nil {
		logger.Warn("calls still in flight at the end of the grace period", "err", err)
	}
	if err := <-shutdown; err != nil {
		_ = hs.Close()
	}
	logger.Info("stopped")
	return nil
}

// planOptions enables the built-in toolhost.plan tool, its events going to
// the bus beside the dispatcher's, with the planner modules of --planners
// (each named by its file name without .wasm). A planner that does not
// load stops the start: the operator asked for it by name.
func planOptions(ctx context.Context, f serveFlags, rt *host.Runtime, bus *events.Bus) (*transport.PlanOptions, error) {
	if !f.planTool {
		return nil, nil
	}
	opts := &transport.PlanOptions{Events: bus, MaxSessionBytes: f.planMaxSession}
	if f.planners == "" {
		return opts, nil
	}
	paths, err := filepath.Glob(filepath.Join(f.planners, "*.wasm"))
	if err != nil {
		return nil, err
	}
	if _, err := os.Stat(f.planners); err != nil {
		return nil, fmt.Errorf("--planners: %w", err)
	}
	opts.Planners = map[string]plan.Planner{}
	for _, p := range paths {
		name := strings.TrimSuffix(filepath.Base(p), ".wasm")
		if name == "static" || name == "rules" {
			return nil, fmt.Errorf("--planners: %s: the names static and rules are the built-in planners'", p)
		}
		pl, err := rt.LoadPlannerFile(ctx, p)
		if err != nil {
			return nil, fmt.Errorf("--planners: %w", err)
		}
		opts.Planners[name] = plan.JSON(pl)
	}
	return opts, nil
}

// loadTokens reads --token-file, else $TOOLHOST_TOKENS (entries separated
// by newlines or commas); nil when neither is set.
func loadTokens(f serveFlags) (*transport.Tokens, error) {
	if f.tokenFile != "" {
		return transport.LoadTokens(f.tokenFile)
	}
	if env := os.Getenv("TOOLHOST_TOKENS"); env != "" {
		return transport.ParseTokens("$TOOLHOST_TOKENS", strings.NewReader(strings.ReplaceAll(env, ",", "\n")))
	}
	return nil, nil
}

// isLoopback reports whether addr binds only loopback addresses. An empty
// host (":7331") binds every interface.
func isLoopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil || host == "" {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

func ignoreClosed(err error) error {
	if err == nil || errors.Is(err, context.Canceled) {
		return nil
	}
	return err
}
