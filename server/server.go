// Package server is toolhost's composition root: it builds the whole
// server from one Settings value (serve's flags, bound by the one table
// Flags returns, and the config file the checker fills) and runs it.
//
// Build assembles the layers in the start-up order of
// docs/ARCHITECTURE.md: tokens, the event bus, the shared state
// and the governor, the runtime, the loader, the dispatcher, the
// transport, and for HTTP the metrics, the mux and the listener. Run
// serves until its context ends, then drains; Close releases what Build
// made, in the reverse order. cmd/toolhost keeps only the command line.
package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	"github.com/toolhost/toolhost/access"
	"github.com/toolhost/toolhost/dispatcher"
	"github.com/toolhost/toolhost/events"
	"github.com/toolhost/toolhost/governor"
	"github.com/toolhost/toolhost/host"
	"github.com/toolhost/toolhost/internal/console"
	"github.com/toolhost/toolhost/internal/metrics"
	"github.com/toolhost/toolhost/loader"
	"github.com/toolhost/toolhost/plan"
	"github.com/toolhost/toolhost/registry"
	"github.com/toolhost/toolhost/transport"
)

// Server is a built toolhost server: its layers wired, its listener (for
// HTTP) open. Run it once, then Close it. Its methods are not safe for
// concurrent use.
type Server struct {
	s       Settings
	logger  *slog.Logger
	closers []func() // run last first by Close

	tokens *transport.Tokens
	bus    *events.Bus
	fleet  *fleet
	op     *Operator
	rt     *host.Runtime
	live   *loader.Live
	d      *dispatcher.Dispatcher
	policy *access.Policy
	srv    *transport.Server

	// HTTP only.
	ln    net.Listener
	hs    *http.Server
	ready atomic.Bool
}

// Build makes a server from s. The config file is s.File; when it is nil
// and s.Config names a file, Build reads it (the file then wins over
// every flag: LoadFile is for a command line that knows which flags were
// given). On an error, what was already made is released. A ctx that
// ends during the start-up compiles ends Build with its error.
func Build(ctx context.Context, s Settings) (*Server, error) {
	if s.File == nil && s.Config != "" {
		if err := s.LoadFile(nil); err != nil {
			return nil, err
		}
	}
	if err := s.check(); err != nil {
		return nil, err
	}
	if s.Log == nil {
		s.Log = io.Discard
	}
	b := &Server{s: s, logger: slog.New(slog.NewJSONHandler(s.Log, nil))}
	// The start-up order of docs/ARCHITECTURE.md.
	steps := []func(context.Context) error{b.buildOperator, b.buildTools, b.buildTransport}
	if !s.Stdio {
		steps = append(steps, b.buildHTTP)
	}
	for _, step := range steps {
		if err := step(ctx); err != nil {
			b.Close()
			return nil, err
		}
	}
	return b, nil
}

// buildOperator reads the tokens and starts the event bus, the shared
// state (with --redis or [redis]) and the governor.
func (b *Server) buildOperator(context.Context) error {
	s := b.s
	var err error
	if b.tokens, err = loadTokens(s); err != nil {
		return err
	}
	b.bus = events.New(events.Options{Logger: b.logger, Values: s.AuditArgs})
	b.op, err = newOperator(s.File, b.bus, func(g governor.Config) (governor.Config, error) {
		var err error
		b.fleet, err = openFleet(s.Redis, s.File, s.Idempotency, b.bus, b.logger)
		return b.fleet.governorStore(g), err
	})
	b.onClose(func() { b.fleet.Close() }) // a fleet opened before the governor failed is closed too
	if err != nil {
		return err
	}
	b.onClose(b.op.Close)
	if !s.Stdio && b.tokens == nil && s.File.OAuthConfig() == nil && !isLoopback(s.Addr) {
		return fmt.Errorf("refusing to serve on %s without authentication: anyone who can reach it could run tools. "+
			"Pass --token-file FILE (lines of identity:token; make one with: echo \"me:$(openssl rand -hex 32)\" > tokens) "+
			"or set TOOLHOST_TOKENS, or configure [auth.oauth], or bind to 127.0.0.1", s.Addr)
	}
	return nil
}

// runtimeConfig is hc with the runtime's flags of s set. The interpreter
// runs only the calls of a lazy start: without --lazy every module is
// compiled before serve listens, so no call finds one compiling.
func (s Settings) runtimeConfig(hc host.Config) host.Config {
	hc.Lazy, hc.WarmUp, hc.MaxResident, hc.MaxFresh = s.Lazy, s.WarmUp, s.MaxResident, s.MaxFresh
	hc.Reuse.Off = s.Reuse == "never"
	hc.Interpret = s.Lazy && s.Interpret
	return hc
}

// buildTools starts the runtime and the loader over the plugins folder.
func (b *Server) buildTools(ctx context.Context) error {
	s := b.s
	var err error
	if b.rt, err = host.New(ctx, s.runtimeConfig(b.op.HostConfig(s.CacheDir, b.logger, s.Compile))); err != nil {
		return err
	}
	b.onClose(func() { b.rt.Close(context.Background()) })
	lopts := b.op.LoaderOptions(s.ToolNames == "exact", s.Plugins)
	lopts.Progress, lopts.Check = s.Log, transport.CheckTool
	lopts.OwnersFile = loader.OwnersFileFor(b.rt.CacheDir(), s.Plugins)
	lopts.Background = s.Lazy // listen before cold modules compile
	if b.live, err = loader.Open(ctx, b.rt, s.Plugins, lopts, b.logger); err != nil {
		return err
	}
	b.onClose(b.live.Close)
	if err := ctx.Err(); err != nil {
		return err // SIGINT or SIGTERM during the start-up compiles (which it ended)
	}
	b.warnAtStart(ctx)
	return nil
}

// buildTransport makes the dispatcher over the loader's tools and the
// MCP server over the dispatcher, with toolhost.plan, and keeps the
// server's list in step with the folder.
func (b *Server) buildTransport(ctx context.Context) error {
	s, cfg := b.s, b.s.File
	dc := b.op.DispatcherConfig()
	dc.Events, dc.TracerProvider, dc.IdempotencyLimits = b.bus, s.TracerProvider, s.Idempotency
	b.d = dispatcher.New(b.live, b.fleet.dispatcherConfig(dc))
	plans, err := planOptions(ctx, s, b.rt, b.bus)
	if err != nil {
		return err
	}
	if plans != nil {
		// A step's result gets the cap a guest's response has.
		plans.MaxResultBytes = int(cfg.HostLimits().OutputBytes)
	}
	b.policy = accessPolicy(cfg, b.tokens, s.Stdio, b.logger)
	if err := transport.CheckInputKeys(cfg.InputKeys()); err != nil {
		return fmt.Errorf("%s: [input] state_keys: %w", s.Config, err)
	}
	b.srv = transport.New(b.d, b.live.Registry(), transport.Options{
		Version: s.Version, Logger: b.logger, AuditArgs: s.AuditArgs,
		MaxArgsBytes: s.MaxArgs, MaxCallsPerCaller: s.MaxCallsPerCaller, MaxStreamsPerCaller: s.MaxStreamsPerCaller,
		MaxSessions: s.MaxSessions, MaxBodyBytes: s.MaxBody, SessionTimeout: s.SessionTimeout,
		Plans: plans, ExactNames: s.ToolNames == "exact", MaxSessionsPerCaller: s.MaxSessionsPerCaller,
		Access:         b.policy,
		TracerProvider: s.TracerProvider,
		Tasks:          transport.TaskOptions{OfferAfter: cfg.TaskOfferAfter()},
		ListMeta:       warmListMeta(b.rt),
		Loading:        b.live,
		Input:          transport.InputOptions{Keys: cfg.InputKeys(), StateTTL: cfg.InputStateTTL()},
	})
	// Follow, not OnChange: a module loaded in the background since
	// Registry() above would otherwise never reach the listing.
	b.live.Follow(b.srv.SetTools)
	b.live.Follow(func(*registry.Registry) { b.d.ToolsChanged() })
	return nil
}

// check refuses settings no server can run with, naming the flag.
func (s *Settings) check() error {
	if s.Reuse != "auto" && s.Reuse != "never" {
		return fmt.Errorf(`--reuse must be "auto" (the default: tools whose manifest allows it reuse warm instances per caller, unless the config says reuse = false) or "never" (a fresh instance for every call), not %q`, s.Reuse)
	}
	for _, id := range s.Operators {
		if err := transport.CheckIdentity(id); err != nil {
			return fmt.Errorf("--operator: %w", err)
		}
	}
	if s.ToolNames != "safe" && s.ToolNames != "exact" {
		return fmt.Errorf(`--tool-names must be "safe" (the default: client-safe names such as text_count) or "exact" (manifest names such as text.count), not %q`, s.ToolNames)
	}
	return nil
}

// warnAtStart warns about what the operator wrote that does nothing: once
// every module present at start is listed for the names the config
// gives, at once for the rest.
func (b *Server) warnAtStart(ctx context.Context) {
	s, cfg, logger, live := b.s, b.s.File, b.logger, b.live
	pending, _ := live.Starting()
	logger.Info("tools loaded", "tools", len(live.Registry().List()), "modules_compiling", pending)
	afterListing(ctx, live, func() {
		for _, name := range cfg.ToolNames() {
			if _, ok := live.Lookup(name); !ok {
				logger.Warn("config names a tool no module serves", "tool", name, "config", s.Config)
			}
		}
		warnUnusedGrants(cfg, live, logger)
		b.op.warnUnusedPrefixes(live.Registry(), logger)
		warnUnmatchedAccess(cfg, live.Registry(), s.PlanTool, logger)
	})
	if cfg.OAuthConfig() == nil {
		warnOperators(s, b.tokens, logger)
	} else {
		warnBareOAuthNames(cfg, s.Operators, b.tokens, logger)
	}
	if cfg.OAuthConfig() != nil && s.Stdio {
		logger.Warn("[auth.oauth] is for HTTP: over --stdio the client is the process that started the server, and no token is checked")
	}
	warnLiteralSecrets(cfg, s.Config, logger)
}

// buildHTTP opens the listener and mounts every endpoint: /mcp, /events,
// /rpc, /metrics and /status behind the tokens, /healthz and /readyz
// open, the console at /ui.
func (b *Server) buildHTTP(ctx context.Context) error {
	s, rt, live, gov := b.s, b.rt, b.live, b.op.gov
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
	go m.Follow(ctx, b.bus)
	b.fleet.register(m.Registry())
	m.Registry().MustRegister(instanceMetrics(rt, live))
	mux := http.NewServeMux()
	ln, hs, err := edgeServer(mux, s)
	if err != nil {
		return err
	}
	b.ln, b.hs = ln, hs
	b.onClose(func() { ln.Close() })
	require, err := authGuard(ctx, s.File.OAuthConfig(), b.tokens, ln.Addr(), mux, b.logger)
	if err != nil {
		return err
	}
	status := &statusSource{version: s.Version, plugins: s.Plugins, cfg: s.File, rt: rt, live: live,
		transports: []string{"streamable-http http://" + ln.Addr().String() + "/mcp"}}
	mux.Handle("/mcp", require(b.srv.HTTPHandler()))
	mux.Handle("GET /events", require(b.bus.Handler(eventStreamOptions(s))))
	mux.Handle("/rpc", require(gov.RPCHandler()))
	mux.Handle("GET /metrics", require(m.Handler()))
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { fmt.Fprintln(w, "ok") })
	mux.HandleFunc("GET /readyz", readyz(&b.ready, live, readyNote(b.fleet.degraded, rt), live.Files))
	mux.Handle("GET /status", require(status.handler()))
	ui := consoleOptions(s, rt, live, b.d, gov, b.srv, b.bus, b.policy)
	if b.tokens != nil || s.File.OAuthConfig() != nil {
		ui.Auth = require
	}
	c := console.New(ui)
	b.onClose(c.Close)
	mux.Handle("/ui", c.Handler())
	mux.Handle("/ui/", c.Handler())
	hs.RegisterOnShutdown(c.CloseStreams)     // live call streams never end by themselves
	hs.RegisterOnShutdown(b.bus.CloseStreams) // event streams never end by themselves
	return nil
}

// Addr is the HTTP listener's address (its port chosen when Addr asked
// for port 0); nil over stdio.
func (b *Server) Addr() net.Addr {
	if b.ln == nil {
		return nil
	}
	return b.ln.Addr()
}

// Run watches the plugins folder (unless Watch is off) and serves until
// ctx ends or, on stdio, the client hangs up; then it stops taking work
// and lets calls in flight finish for up to Grace.
func (b *Server) Run(ctx context.Context) error {
	if b.s.Watch {
		go func() {
			if err := b.live.Watch(ctx, 0); err != nil {
				b.logger.Warn("hot reload is off", "err", err)
			}
		}()
	}
	if b.s.Stdio {
		// initialize is answered at once; a tools/list waits for the
		// modules still compiling to be listed (transport.Loading).
		noteStarting(b.live, b.logger)
		return serveStdio(ctx, b.srv, b.s.Grace, b.logger)
	}
	return b.serveHTTP(ctx)
}

func (b *Server) serveHTTP(ctx context.Context) error {
	served := make(chan error, 1)
	go func() { served <- b.hs.Serve(b.ln) }()
	b.ready.Store(true)
	announceServing(ctx, b.live, "http://"+b.ln.Addr().String()+"/mcp", b.logger)
	select {
	case err := <-served:
		return err
	case <-ctx.Done():
	}
	b.ready.Store(false)
	b.logger.Info("shutting down", "grace", b.s.Grace)
	graceCtx, cancel := context.WithTimeout(context.Background(), b.s.Grace)
	defer cancel()
	shutdown := make(chan error, 1)
	go func() { shutdown <- b.hs.Shutdown(graceCtx) }() // stops accepting now
	if err := b.srv.Drain(graceCtx); err != nil {
		b.logger.Warn("calls still in flight at the end of the grace period", "err", err)
	}
	if err := <-shutdown; err != nil {
		_ = b.hs.Close()
	}
	b.logger.Info("stopped")
	return nil
}

// Close releases what Build made, last made first: the console, the
// listener, the modules, the runtime, the governor and the shared state.
// It may be called more than once.
func (b *Server) Close() {
	for i := len(b.closers) - 1; i >= 0; i-- {
		b.closers[i]()
	}
	b.closers = nil
}

func (b *Server) onClose(f func()) { b.closers = append(b.closers, f) }

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

// planOptions enables the built-in toolhost.plan tool, its events going to
// the bus beside the dispatcher's, with the planner modules of --planners
// (each named by its file name without .wasm). A planner that does not
// load stops the start: the operator asked for it by name.
func planOptions(ctx context.Context, s Settings, rt *host.Runtime, bus *events.Bus) (*transport.PlanOptions, error) {
	if !s.PlanTool {
		return nil, nil
	}
	opts := &transport.PlanOptions{Events: bus, MaxSessionBytes: s.PlanMaxSessionBytes}
	if s.Planners == "" {
		return opts, nil
	}
	paths, err := filepath.Glob(filepath.Join(s.Planners, "*.wasm"))
	if err != nil {
		return nil, err
	}
	if _, err := os.Stat(s.Planners); err != nil {
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
func loadTokens(s Settings) (*transport.Tokens, error) {
	if s.TokenFile != "" {
		return transport.LoadTokens(s.TokenFile)
	}
	if s.TokensEnv != "" {
		return transport.ParseTokens("$TOOLHOST_TOKENS", strings.NewReader(strings.ReplaceAll(s.TokensEnv, ",", "\n")))
	}
	return nil, nil
}

func ignoreClosed(err error) error {
	if err == nil || errors.Is(err, context.Canceled) {
		return nil
	}
	return err
}
