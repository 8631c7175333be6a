package server

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync/atomic"

	"github.com/toolhost/toolhost/host"
	"github.com/toolhost/toolhost/loader"
)

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
				if f.State == loader.StateRefused && f.Reason != "" {
					fmt.Fprintf(&b, " (%s)", strings.ReplaceAll(f.Reason, "\n", " "))
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
