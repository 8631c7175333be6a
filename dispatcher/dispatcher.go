// Package dispatcher stands between callers and tools. It is the only layer
// that knows about timers, retries and idempotency: it looks a tool up,
// validates the arguments, runs attempts under per-attempt timeouts, and
// turns every failure into one DispatchError envelope.
package dispatcher

import (
	"context"
	"encoding/json"
	"log/slog"
	"time"

	"github.com/toolhost/toolhost/registry"
)

// Tools is what the dispatcher needs of a registry. Lookup must be safe for
// concurrent use.
type Tools interface {
	Lookup(name string) (*registry.Tool, bool)
}

// Options are a caller's dispatch options: the MCP tools/call _meta keys
// toolhost/idempotency_key, toolhost/timeout_ms, toolhost/budget and
// toolhost/priority. The zero value means "no key, the tool's timeout, no
// budget, default priority".
type Options struct {
	// IdempotencyKey dedupes calls: calls with one key share one
	// execution. Empty means no deduplication.
	IdempotencyKey string
	// Timeout overrides the tool's per-attempt timeout when > 0.
	Timeout time.Duration
	// Budget is how many attempts the caller can still afford; nil means
	// unlimited (the retry policy still caps attempts).
	Budget *int
	// Priority is the governor priority class; empty means the tool's
	// default.
	Priority string
}

// Call is one request to run a tool.
type Call struct {
	Tool string
	Args json.RawMessage
	Options
}

// Config configures a Dispatcher. The zero value is usable.
type Config struct {
	// Logger receives structured events; nil means slog.Default.
	Logger *slog.Logger
}

// Dispatcher runs calls against a set of tools. It is safe for concurrent
// use.
type Dispatcher struct {
	tools  Tools
	logger *slog.Logger
}

// New returns a Dispatcher over tools.
func New(tools Tools, cfg Config) *Dispatcher {
	logger := cfg.Logger
	if logger == nil {
		logger = slog.Default()
	}
	return &Dispatcher{tools: tools, logger: logger}
}

// Call runs c and returns the tool's result JSON, or a *DispatchError.
func (d *Dispatcher) Call(ctx context.Context, c Call) (json.RawMessage, error) {
	tool, ok := d.tools.Lookup(c.Tool)
	if !ok {
		return nil, newError(KindNotFound, 0, nil, "no tool named %q (toolhost list shows the tools this server has)", c.Tool)
	}
	if err := tool.Validate(c.Args); err != nil {
		return nil, newError(KindSchema, 0, err, "%s", err.Error())
	}
	res, derr := d.attempt(ctx, tool, c, 1)
	if derr != nil {
		return nil, derr
	}
	return res, nil
}

// attempt runs the tool once under its per-attempt timeout, which starts
// now, not when the call arrived.
func (d *Dispatcher) attempt(ctx context.Context, tool *registry.Tool, c Call, n int) (json.RawMessage, *DispatchError) {
	timeout := tool.Timeout
	if c.Timeout > 0 {
		timeout = c.Timeout
	}
	actx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	res, err := tool.Handler.Handle(actx, c.Args)
	if err != nil {
		return nil, classify(tool, err, n, actx, ctx, timeout)
	}
	return res, nil
}
