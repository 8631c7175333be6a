// Package config reads toolhost's config file: the operator's per-tool
// policy over what each module's manifest says (timeouts, idempotency,
// concurrency, circuit breaker settings, memory and output limits), and the
// server-wide defaults for them.
//
// The file is TOML, parsed with github.com/pelletier/go-toml/v2. docs/CONFIG.md
// describes every key. A minimal file:
//
//	[dispatch]
//	concurrency = 8
//
//	[tools."db.write"]
//	timeout = "5s"
//	idempotent = false
//	concurrency = 2
//
// Every section and key is optional; a key left out keeps the built-in
// default (or the manifest's value). Parse refuses a file with an unknown key,
// a value of the wrong type or out of range, or a tool name a manifest could
// not declare, and says on which line (see Error).
package config

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"slices"
	"strconv"
	"time"

	"github.com/toolhost/toolhost/access"
	"github.com/toolhost/toolhost/breaker"
	"github.com/toolhost/toolhost/dispatcher"
	"github.com/toolhost/toolhost/host"
	"github.com/toolhost/toolhost/loader"
)

// Config is a parsed config file. A zero field (a nil pointer) was not set
// in the file: it keeps the default of the layer it configures.
type Config struct {
	// Dispatch is the [dispatch] section.
	Dispatch Dispatch
	// Breaker is the [breaker] section: defaults for every tool's breaker.
	Breaker Breaker
	// Limits is the [limits] section: defaults for every call. Memory is
	// in [MinMemory, MaxMemory]; Output and Log are at least 1 byte and
	// below 4 GiB.
	Limits host.Limits
	// Tools are the [tools."NAME"] sections, by tool name. Every name
	// matches ^[A-Za-z0-9_.-]{1,128}$.
	Tools map[string]Tool
	// Governor is the [governor] section and the [quotas."NAME"]
	// sections (see governor.go).
	Governor Governor
	// Grants are the [grants."MODULE.wasm"] sections: egress grants, by
	// module file name.
	Grants map[string]Grant
	// Modules are the [modules."MODULE.wasm"] sections (see views.go), by
	// module file name.
	Modules map[string]Module
	// Access are the [[access]] rules, in file order (see access.go and
	// package access): who may see and call which tool.
	Access []access.Rule
	// Auth is the [auth] section (see oauth.go).
	Auth Auth
	// Redis is the [redis] section (see redis.go).
	Redis Redis
}

// Dispatch is the [dispatch] section.
type Dispatch struct {
	// Concurrency (concurrency) caps each tool's executions in flight.
	Concurrency int
	// GlobalConcurrency (global_concurrency) caps all executions in flight.
	GlobalConcurrency int
	// QueueTimeout (queue_timeout) bounds a call's wait for a free slot.
	QueueTimeout time.Duration
	// IdempotencyTTL (idempotency_ttl) is how long a completed outcome is
	// replayed to a call with the same idempotency key.
	IdempotencyTTL time.Duration
}

// Breaker is a [breaker] or [tools."NAME".breaker] section: circuit breaker
// settings (see package breaker for what each does).
type Breaker struct {
	// Failures (failures) consecutive failures open the breaker while
	// the window holds fewer than MinCalls calls.
	Failures int
	// FailureRate (failure_rate), in (0, 1], is the share of failed calls
	// in the window that opens the breaker once it holds MinCalls calls.
	// Nil means not set.
	FailureRate *float64
	// MinCalls (min_calls) is the fewest calls in the window for
	// FailureRate to apply.
	MinCalls int
	// Window (window) is the sliding window calls are counted in.
	Window time.Duration
	// Cooldown (cooldown) is how long an open breaker refuses calls.
	Cooldown time.Duration
	// Jitter (jitter), in [0, 1], spreads cool-downs by up to that
	// fraction. Nil means not set; 0 means no jitter.
	Jitter *float64
	// Probes (probes) is how many calls a half-open breaker admits.
	Probes int
}

// Tool is a [tools."NAME"] section: the operator's word on one tool.
type Tool struct {
	// Timeout (timeout) replaces the manifest's per-attempt timeout.
	Timeout time.Duration
	// MaxTimeout (max_timeout) is the longest per-attempt timeout a
	// caller's toolhost/timeout_ms may ask for; without it a caller can
	// only shorten the tool's timeout.
	MaxTimeout time.Duration
	// Idempotent (idempotent) replaces the manifest's flag. false makes a
	// tool more conservative: the dispatcher no longer retries it.
	Idempotent *bool
	// ReadOnly (read_only) replaces the manifest's flag.
	ReadOnly *bool
	// Concurrency (concurrency) caps this tool's executions in flight.
	Concurrency int
	// Limits (memory, output, log) replace [limits] for this tool.
	Limits host.Limits
	// Breaker ([tools."NAME".breaker]) replaces [breaker] field by field.
	Breaker Breaker
	// View (expose, name, description) is what MCP clients see of the
	// tool (see views.go).
	View View
}

// Bounds the file is checked against.
const (
	// MinMemory is the smallest memory limit accepted: a Go guest needs
	// about 3.25 MiB of linear memory to start.
	MinMemory = 4 << 20
	// MaxMemory is the largest: WebAssembly 1.0 memories are 32-bit.
	MaxMemory = 4 << 30
	// MaxCount bounds concurrency, global_concurrency, failures and probes:
	// a larger value is taken for a typo.
	MaxCount = 1_000_000
)

// Error is a config file that cannot be used: FILE:LINE: REASON. Line is
// 1-based; 0 means the error is about the file as a whole (it could not be
// read).
type Error struct {
	File   string
	Line   int
	Reason string
	// Err is the underlying error, if any (a read error, for errors.Is).
	Err error
}

// Error returns "FILE:LINE: REASON", or "FILE: REASON" when Line is 0. An
// empty File prints as "config".
func (e *Error) Error() string {
	file := e.File
	if file == "" {
		file = "config"
	}
	if e.Line <= 0 {
		return file + ": " + e.Reason
	}
	return file + ":" + strconv.Itoa(e.Line) + ": " + e.Reason
}

// Unwrap returns the underlying error, if any.
func (e *Error) Unwrap() error { return e.Err }

// Load reads and parses the config file at path. Every error it returns is
// an *Error.
func Load(path string) (*Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		reason := err.Error()
		var pe *fs.PathError
		if errors.As(err, &pe) {
			reason = fmt.Sprintf("cannot %s: %v", pe.Op, pe.Err)
		}
		return nil, &Error{File: path, Reason: reason, Err: err}
	}
	return Parse(path, data)
}

// Parse parses a config file's contents; name is the file name errors
// carry. Every error it returns is an *Error: the first problem in the file
// (the one nearest its top), with its line.
func Parse(name string, data []byte) (*Config, error) {
	return parse(name, string(data))
}

// Dispatcher returns base with the file's settings applied: Concurrency,
// GlobalConcurrency, QueueTimeout, IdempotencyTTL and Breaker where the file
// sets them, and a Tools policy (Concurrency, MaxTimeout and Breaker, field
// by field) for every tool whose section sets any of them. base.Tools is copied, not
// modified. A nil Config returns base.
func (c *Config) Dispatcher(base dispatcher.Config) dispatcher.Config {
	if c == nil {
		return base
	}
	out := base
	d := c.Dispatch
	if d.Concurrency > 0 {
		out.Concurrency = d.Concurrency
	}
	if d.GlobalConcurrency > 0 {
		out.GlobalConcurrency = d.GlobalConcurrency
	}
	if d.QueueTimeout > 0 {
		out.QueueTimeout = d.QueueTimeout
	}
	if d.IdempotencyTTL > 0 {
		out.IdempotencyTTL = d.IdempotencyTTL
	}
	out.Breaker = c.Breaker.apply(base.Breaker)
	var tools map[string]dispatcher.ToolPolicy
	for name, t := range c.Tools {
		if t.Concurrency == 0 && t.MaxTimeout == 0 && t.Breaker.isZero() {
			continue
		}
		if tools == nil {
			tools = maps.Clone(base.Tools)
			if tools == nil {
				tools = make(map[string]dispatcher.ToolPolicy)
			}
		}
		p := tools[name]
		if t.Concurrency > 0 {
			p.Concurrency = t.Concurrency
		}
		if t.MaxTimeout > 0 {
			p.MaxTimeout = t.MaxTimeout
		}
		p.Breaker = t.Breaker.apply(p.Breaker)
		tools[name] = p
	}
	if tools != nil {
		out.Tools = tools
	}
	return out
}

// HostLimits returns the [limits] section: the runtime-wide limits for
// host.Config.Limits. Zero fields were not set (the host's defaults apply).
// A nil Config returns zero Limits.
func (c *Config) HostLimits() host.Limits {
	if c == nil {
		return host.Limits{}
	}
	return c.Limits
}

// Overrides returns one loader.Override per [tools."NAME"] section: timeout,
// idempotent, read_only, the tool's limits and its view (expose, name,
// description), for loader.Options.Overrides.
// Unset fields are zero (the manifest's value or the runtime's limits
// apply). A nil Config returns nil.
func (c *Config) Overrides() map[string]loader.Override {
	if c == nil {
		return nil
	}
	out := make(map[string]loader.Override, len(c.Tools))
	for name, t := range c.Tools {
		out[name] = loader.Override{
			Timeout:    t.Timeout,
			Idempotent: clonePtr(t.Idempotent),
			ReadOnly:   clonePtr(t.ReadOnly),
			Limits:     t.Limits,

			Expose:      clonePtr(t.View.Expose),
			WireName:    t.View.Name,
			Description: t.View.Description,
		}
	}
	return out
}

// ToolNames returns the names of the [tools."NAME"] sections, sorted, so the
// caller can warn about names no loaded module serves.
func (c *Config) ToolNames() []string {
	if c == nil {
		return nil
	}
	return slices.Sorted(maps.Keys(c.Tools))
}

// apply returns s with b's set fields in place of its own. A jitter of 0 in
// the file ("no jitter") becomes breaker's negative Jitter.
func (b Breaker) apply(s breaker.Settings) breaker.Settings {
	if b.Failures > 0 {
		s.Failures = b.Failures
	}
	if b.FailureRate != nil {
		s.FailureRate = *b.FailureRate
	}
	if b.MinCalls > 0 {
		s.MinCalls = b.MinCalls
	}
	if b.Window > 0 {
		s.Window = b.Window
	}
	if b.Cooldown > 0 {
		s.Cooldown = b.Cooldown
	}
	if b.Jitter != nil {
		s.Jitter = *b.Jitter
		if s.Jitter == 0 {
			s.Jitter = -1
		}
	}
	if b.Probes > 0 {
		s.Probes = b.Probes
	}
	return s
}

func (b Breaker) isZero() bool {
	return b.Failures == 0 && b.FailureRate == nil && b.MinCalls == 0 && b.Window == 0 && b.Cooldown == 0 && b.Jitter == nil && b.Probes == 0
}

func clonePtr[T any](p *T) *T {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}
