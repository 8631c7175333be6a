package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"runtime"
	"strings"
	"sync/atomic"

	"github.com/spf13/cobra"
	"github.com/toolhost/toolhost/host"
	"github.com/toolhost/toolhost/internal/config"
	"github.com/toolhost/toolhost/loader"
)

// lazyFlags are serve's flags for when modules' code is compiled and kept,
// and how many fresh instances run at once.
type lazyFlags struct {
	lazy        bool
	warmUp      bool
	maxResident int
	maxFresh    int
}

func (l *lazyFlags) register(cmd *cobra.Command) {
	fs := cmd.Flags()
	fs.BoolVar(&l.lazy, "lazy", true, "serve at once: list modules described before (the describe cache) or carrying their manifest (toolhost manifest embed) without compiling them (each compiles in the background, or on its first call, which waits for it under the caller's deadline, not the tool's timeout), and compile the others in the background, listing each when done (/readyz says 503 until all are; a tools/list waits for them); --lazy=false compiles every module before serving")
	fs.BoolVar(&l.warmUp, "warm-up", true, "with --lazy (the default), compile the modules listed from the describe cache in the background after the start, so most first calls find them ready")
	fs.IntVar(&l.maxFresh, "max-fresh", 4*runtime.GOMAXPROCS(0), "most fresh instances made and run at once; more calls queue under their deadline (0: no bound). Near the CPU count keeps latency and memory bounded when the CPU is saturated")
	fs.IntVar(&l.maxResident, "max-resident", 0, "most modules whose compiled code stays in memory; idle ones past it are released and compiled again (from the cache) on their next call (0: no limit)")
}

// fromConfig takes the [runtime] keys of the config file for the flags
// the command line did not set: a flag given wins over the file. They are
// read at start; a config reload does not change them.
func (l *lazyFlags) fromConfig(cmd *cobra.Command, c *config.Config) {
	if c == nil {
		return
	}
	r := c.Runtime
	take := func(flag string, inFile bool, set func()) {
		if inFile && !cmd.Flags().Changed(flag) {
			set()
		}
	}
	take("lazy", r.Lazy != nil, func() { l.lazy = *r.Lazy })
	take("warm-up", r.WarmUp != nil, func() { l.warmUp = *r.WarmUp })
	take("max-resident", r.MaxResident != nil, func() { l.maxResident = *r.MaxResident })
	take("max-fresh", r.MaxFresh != nil, func() { l.maxFresh = *r.MaxFresh })
}

// apply sets the flags' fields of the host's config.
func (l *lazyFlags) apply(c *host.Config) {
	c.Lazy, c.WarmUp, c.MaxResident, c.MaxFresh = l.lazy, l.warmUp, l.maxResident, l.maxFresh
}

// readyNote adds the modules compiling on demand to what /readyz says
// beside "ready": a replica whose first calls wait on a compile is
// serving, and says why those calls are slow.
func readyNote(degraded func() string, rt *host.Runtime) func() string {
	return func() string {
		msg := degraded()
		if s := rt.ModuleStats(); s.Compiling+s.WarmQueued > 0 {
			if msg == "" {
				msg = "ready"
			}
			msg += fmt.Sprintf("; %d modules compiling, %d queued to (their calls wait for it)", s.Compiling, s.WarmQueued)
		}
		return msg
	}
}

// starting is how far the start is: with --lazy, modules that were not in
// the describe cache compile after serve listens (loader.Live).
type starting interface {
	// StartingNote says how many modules are listed while some still
	// compile, "" once every module present at start is listed or refused.
	StartingNote() string
	// Listed is closed once every module present at start is listed or
	// refused.
	Listed() <-chan struct{}
}

// announceServing writes the "serving MCP" line once every module present
// at start is listed (or refused): scripts and benchmarks read that line as
// "every tool is listed", the meaning it had before serve listened early.
// Until then a "listening" line says why the list may still grow.
func announceServing(ctx context.Context, start starting, url string, logger *slog.Logger) {
	if note := start.StartingNote(); note != "" {
		logger.Info("listening; modules still compiling in the background (/readyz answers 503 until every module is listed)",
			"url", url, "progress", note)
	}
	afterListing(ctx, start, func() { logger.Info("serving MCP over Streamable HTTP", "url", url) })
}

// afterListing runs f once every module present at start is listed or
// refused: at once when they are, else on its own goroutine (never, if ctx
// ends first).
func afterListing(ctx context.Context, start starting, f func()) {
	select {
	case <-start.Listed():
		f()
		return
	default:
	}
	go func() {
		select {
		case <-start.Listed():
			if ctx.Err() == nil { // both may be ready: stopping wins
				f()
			}
		case <-ctx.Done():
		}
	}()
}

// noteStarting logs, for a --stdio server, the modules still compiling
// in the background when it starts answering: its client's first
// tools/list waits for them (there is no readiness probe on stdio).
func noteStarting(start starting, logger *slog.Logger) {
	if note := start.StartingNote(); note != "" {
		logger.Info("answering on stdio; a tools/list waits for the modules compiling in the background", "progress", note)
	}
}

// readyz answers /readyz: 503 while shutting down (ready false) and while
// modules present at start are still compiling (a load balancer must not
// send calls for tools not listed yet); then 200 "ready", or 200 with the
// degraded note (the replica serves, in its decided failure modes). After
// that first line, one line per module file from files (nil: none): its
// state and version. /readyz is unauthenticated, so a refusal's reason is
// left to `toolhost status` and `toolhost list`, which ask behind the
// server's authentication.
func readyz(ready *atomic.Bool, start starting, degraded func() string, files func() []loader.FileState) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		if !ready.Load() {
			http.Error(w, "shutting down", http.StatusServiceUnavailable)
			return
		}
		var b strings.Builder
		code := http.StatusOK
		switch {
		case start.StartingNote() != "":
			code = http.StatusServiceUnavailable
			b.WriteString(start.StartingNote())
		case degraded() != "":
			b.WriteString(degraded())
		default:
			b.WriteString("ready")
		}
		b.WriteString("\n")
		if files != nil {
			for _, f := range files() {
				fmt.Fprintf(&b, "%s: %s", f.Path, f.State)
				if f.SHA256 != "" {
					fmt.Fprintf(&b, " %s", f.SHA256)
				}
				if f.State == loader.StateServing && f.Verifying {
					b.WriteString(" (listed from its embedded manifest; code compiling)")
				}
				b.WriteString("\n")
			}
		}
		if code != http.StatusOK {
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
			w.Header().Set("X-Content-Type-Options", "nosniff")
			w.WriteHeader(code)
		}
		_, _ = io.WriteString(w, b.String())
	}
}
