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
	"github.com/toolhost/toolhost/governor"
	"github.com/toolhost/toolhost/internal/hostconf"
)

// Config is a parsed config file. A zero field (a nil pointer) was not set
// in the file: it keeps the default of the layer it configures.
//
// Where a layer's own type can hold a section, the checker fills that type
// (breaker.Settings, hostconf.Limits, governor.Config, access.Rule), writing
// the layer's spelling of each value: a jitter or throttle_reserve of 0
// ("none") is stored as -1, because both layers read 0 as "the default".
// The config-side types that remain say why in their doc comments.
// Package server turns a Config into running parts; this package imports
// only the types it fills, and none that links WebAssembly.
type Config struct {
	// Dispatch is the [dispatch] section.
	Dispatch Dispatch
	// Breaker is the [breaker] section: defaults for every tool's breaker.
	// Its zero fields were not set; Jitter is -1 for jitter = 0.
	Breaker breaker.Settings
	// Limits is the [limits] section: defaults for every call. Memory is
	// in [MinMemory, MaxMemory]; Output and Log are at least 1 byte and
	// below 4 GiB.
	Limits hostconf.Limits
	// Tools are the [tools."NAME"] sections, by tool name. Every name
	// matches ^[A-Za-z0-9_.-]{1,128}$.
	Tools map[string]Tool
	// Governor is the [governor] section, the [governor.priorities] and
	// the [quotas."NAME"] sections, in name order (see governor.go). Its
	// zero fields were not set; ThrottleReserve is -1 for
	// throttle_reserve = 0. Store and Events are for the caller to set.
	Governor governor.Config
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
	// Input is the [input] section (see input.go): input request state
	// keys.
	Input Input
	// Trust is the [trust] section (see trust.go): keys pull trusts.
	Trust Trust
	// Registries are the [registries."HOST"] tables (see registries.go):
	// credentials and plain HTTP for pull and push, by registry host.
	Registries map[string]Registry
	// Reuse is the [reuse] section (see reuse.go): the bounds of warm
	// instances. Its zero fields were not set; Off is never set by the
	// file (serve --reuse=never is the switch).
	Reuse hostconf.Reuse
	// Runtime is the [runtime] section (see runtime.go): lazy modules,
	// resident code and fresh-instance admission.
	Runtime Runtime
	// HTTP is the [http] section (see http.go): per-client bounds of the
	// HTTP listener.
	HTTP HTTP
}

// Dispatch is the [dispatch] section. Its keys are the dispatcher's own
// Config fields, which the checker fills directly: a [dispatch] key is one
// line in parse.go (and a field of dispatcher.Config), with no copy
// anywhere else. The checker sets only the fields its [dispatch] keys
// name (parse.go); Events, Governor, the stores and the others are the
// server's to set.
// [breaker] and the per-tool policies stay in Breaker and Tools, beside
// the keys that go to other layers.
type Dispatch struct {
	dispatcher.Config
	// TaskOfferAfter (task_offer_after): tools whose timeout is longer
	// are offered to MCP clients as tasks (see TaskOfferAfter). It is
	// the transport's, not the dispatcher's.
	TaskOfferAfter time.Duration
}

// Tool is a [tools."NAME"] section: the operator's word on one tool. It is
// a config-side type because its keys go to two layers that are no leaves:
// the loader (timeout, flags, limits, view: loader.Override) and the
// dispatcher (max_timeout, concurrency, breaker: dispatcher.ToolPolicy).
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
	Limits hostconf.Limits
	// Breaker ([tools."NAME".breaker]) replaces [breaker] field by field:
	// its zero fields were not set; Jitter is -1 for jitter = 0.
	Breaker breaker.Settings
	// View (expose, name, description) is what MCP clients see of the
	// tool (see views.go).
	View View
	// Reuse (reuse) false keeps the tool in fresh instances even when its
	// manifest allows warm ones (see reuse.go).
	Reuse *bool
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

// HostLimits returns the [limits] section: the runtime-wide limits for
// host.Config.Limits. Zero fields were not set (the host's defaults apply).
// A nil Config returns zero Limits.
func (c *Config) HostLimits() hostconf.Limits {
	if c == nil {
		return hostconf.Limits{}
	}
	return c.Limits
}

// ToolNames returns the names of the [tools."NAME"] sections, sorted, so the
// caller can warn about names no loaded module serves.
func (c *Config) ToolNames() []string {
	if c == nil {
		return nil
	}
	return slices.Sorted(maps.Keys(c.Tools))
}
