package server

import (
	"io"
	"runtime"
	"time"

	"github.com/spf13/pflag"
	"go.opentelemetry.io/otel/trace"

	"github.com/toolhost/toolhost/events"
	"github.com/toolhost/toolhost/host"
	"github.com/toolhost/toolhost/idempotency"
	"github.com/toolhost/toolhost/internal/config"
	"github.com/toolhost/toolhost/transport"
)

// Settings is everything a server is built from: the `toolhost serve`
// flags (one field each, bound by the table Flags returns, whose usage
// text documents it) and the config file (File, which the config checker
// fills). Default gives the flags' defaults. A Settings is a plain value:
// Build reads it and keeps a copy.
type Settings struct {
	// Plugins is --plugins, the folder of .wasm tool modules.
	Plugins string
	// Addr is --addr, the HTTP listen address.
	Addr string
	// Stdio is --stdio: MCP on stdin/stdout instead of HTTP.
	Stdio bool
	// CacheDir is --cache-dir ("off" disables the cache).
	CacheDir string
	// Config is --config, the TOML file LoadFile reads into File.
	Config string
	// Watch is --watch: reload plugins when the folder changes.
	Watch bool
	// Grace is --grace, how long calls in flight may take at shutdown.
	Grace time.Duration

	// TokenFile is --token-file; TokensEnv is $TOOLHOST_TOKENS, used when
	// TokenFile is empty (the command line reads the environment).
	TokenFile, TokensEnv string
	// AuditArgs is --audit-args.
	AuditArgs bool
	// MaxBody is --max-body.
	MaxBody int64
	// MaxArgs is --max-args.
	MaxArgs int
	// MaxSessions is --max-sessions.
	MaxSessions int
	// MaxCallsPerCaller is --max-calls-per-caller.
	MaxCallsPerCaller int
	// MaxStreamsPerCaller is --max-streams-per-caller.
	MaxStreamsPerCaller int
	// SessionTimeout is --session-timeout.
	SessionTimeout time.Duration
	// PlanTool is --plan-tool; Planners is --planners;
	// PlanMaxSessionBytes is --plan-max-session-bytes.
	PlanTool            bool
	Planners            string
	PlanMaxSessionBytes int
	// Reuse is --reuse ("auto" or "never").
	Reuse string
	// ToolNames is --tool-names ("safe" or "exact").
	ToolNames string

	// AllowOrigins is --allow-origin.
	AllowOrigins []string
	// ReadTimeout and IdleTimeout are --read-timeout and --idle-timeout.
	ReadTimeout, IdleTimeout time.Duration
	// MaxConns is --max-conns.
	MaxConns int
	// MaxConnsPerPeer is --max-conns-per-peer, or [http]
	// max_conns_per_peer.
	MaxConnsPerPeer int
	// MaxSessionsPerCaller is --max-sessions-per-caller.
	MaxSessionsPerCaller int

	// Operators is --operator.
	Operators []string
	// MaxEventStreams and MaxEventStreamsPerIdentity are
	// --max-event-streams and --max-event-streams-per-identity.
	MaxEventStreams, MaxEventStreamsPerIdentity int
	// Idempotency holds the --idempotency-max-* bounds.
	Idempotency idempotency.Limits

	// Lazy, WarmUp, Interpret, MaxResident and MaxFresh are --lazy,
	// --warm-up, --interpret, --max-resident and --max-fresh, or the
	// [runtime] keys.
	Lazy, WarmUp, Interpret bool
	MaxResident, MaxFresh   int

	// Redis is --redis, or [redis] url.
	Redis string

	// File is the config file, as the checker filled it; nil for none.
	// LoadFile sets it from Config.
	File *config.Config

	// Log receives the JSON log and the start's progress; nil is
	// io.Discard.
	Log io.Writer
	// Version is what the server says it is (/status, the console,
	// MCP's serverInfo, traces).
	Version string
	// TracerProvider makes the spans of calls (the transport's, the
	// dispatcher's, egress); nil is no tracing, at no cost. The command
	// line makes it from the OTEL_* variables.
	TracerProvider trace.TracerProvider
	// Compile bounds each module's compile (host.CompileLimits); the
	// zero value compiles in this process.
	Compile host.CompileLimits
}

// A Flag binds one `toolhost serve` flag to its Settings field, and, for
// a flag the config file can set too, to that key: a flag given on the
// command line wins over the file, which wins over the flag's default.
// A Flag is immutable.
type Flag struct {
	// Name is the flag's name, without dashes.
	Name string
	// Usage is its help text.
	Usage string
	// Key is the config key that sets it too ("[runtime] lazy"), "" for
	// none.
	Key string

	bind func(fs *pflag.FlagSet, s *Settings)
	// take sets s's field from c where c sets the key; nil when Key is "".
	take func(s *Settings, c *config.Config)
}

// flagValue is what a flag holds.
type flagValue interface {
	string | bool | int | int64 | time.Duration | []string
}

// flag is a flag of field with no config key.
func flag[T flagValue](name string, def T, usage string, field func(*Settings) *T) Flag {
	return Flag{Name: name, Usage: usage, bind: func(fs *pflag.FlagSet, s *Settings) { bind(fs, field(s), name, def, usage) }}
}

// keyed is a flag of field that the config file's key sets too, where
// get gives the file's value (nil: the file does not set it).
func keyed[T flagValue](name string, def T, usage string, field func(*Settings) *T, key string, get func(*config.Config) *T) Flag {
	f := flag(name, def, usage, field)
	f.Key = key
	f.take = func(s *Settings, c *config.Config) {
		if v := get(c); v != nil {
			*field(s) = *v
		}
	}
	return f
}

func bind[T flagValue](fs *pflag.FlagSet, p *T, name string, def T, usage string) {
	switch p := any(p).(type) {
	case *string:
		fs.StringVar(p, name, any(def).(string), usage)
	case *bool:
		fs.BoolVar(p, name, any(def).(bool), usage)
	case *int:
		fs.IntVar(p, name, any(def).(int), usage)
	case *int64:
		fs.Int64Var(p, name, any(def).(int64), usage)
	case *time.Duration:
		fs.DurationVar(p, name, any(def).(time.Duration), usage)
	case *[]string:
		fs.StringArrayVar(p, name, any(def).([]string), usage)
	}
}

// Flags is the one table of serve's flags: their names, defaults and
// usage, the Settings field each sets, and the config key that sets it
// too.
func Flags() []Flag {
	str := func(p *string) *string {
		if p == nil || *p == "" {
			return nil
		}
		return p
	}
	return []Flag{
		flag("plugins", "./plugins", "folder of .wasm tool modules", func(s *Settings) *string { return &s.Plugins }),
		flag("addr", "127.0.0.1:7331", "HTTP listen address (Streamable HTTP at /mcp)", func(s *Settings) *string { return &s.Addr }),
		flag("stdio", false, "speak MCP on stdin/stdout instead of HTTP", func(s *Settings) *bool { return &s.Stdio }),
		flag("cache-dir", "", `compilation cache folder (default <user cache dir>/toolhost/wazero; "off" disables)`, func(s *Settings) *string { return &s.CacheDir }),
		flag("config", "", "TOML file: dispatch settings, per-tool overrides, quotas and egress grants (docs/CONFIG.md)", func(s *Settings) *string { return &s.Config }),
		flag("watch", true, "reload plugins when files in the folder change (--watch=false to turn off)", func(s *Settings) *bool { return &s.Watch }),
		flag("grace", 10*time.Second, "how long calls in flight may take to finish at shutdown", func(s *Settings) *time.Duration { return &s.Grace }),
		flag("token-file", "", "bearer tokens for HTTP, one 'identity:token' per line ($TOOLHOST_TOKENS works too); required off loopback", func(s *Settings) *string { return &s.TokenFile }),
		flag("audit-args", false, "log argument values in the audit log, and keep argument and result values in events (off: they may hold secrets)", func(s *Settings) *bool { return &s.AuditArgs }),
		flag("max-body", int64(4<<20), "largest HTTP request body (or stdio line), in bytes", func(s *Settings) *int64 { return &s.MaxBody }),
		flag("max-args", 1<<20, "largest tool arguments, in bytes", func(s *Settings) *int { return &s.MaxArgs }),
		flag("max-sessions", 256, "most concurrent MCP sessions over HTTP", func(s *Settings) *int { return &s.MaxSessions }),
		flag("max-calls-per-caller", 64, "most calls in flight for one caller (one token identity)", func(s *Settings) *int { return &s.MaxCallsPerCaller }),
		flag("max-streams-per-caller", 128, "most MCP 2026-07-28 (stateless) requests open at once for one caller, subscriptions/listen included", func(s *Settings) *int { return &s.MaxStreamsPerCaller }),
		flag("session-timeout", 30*time.Minute, "close HTTP sessions idle this long", func(s *Settings) *time.Duration { return &s.SessionTimeout }),
		flag("plan-tool", true, "list the built-in toolhost.plan tool, which runs plans on the server (docs/PLAN.md)", func(s *Settings) *bool { return &s.PlanTool }),
		flag("planners", "", "folder of .wasm planner modules toolhost.plan callers may choose by file name (without .wasm)", func(s *Settings) *string { return &s.Planners }),
		flag("plan-max-session-bytes", transport.DefaultMaxSessionBytes, "most bytes of arguments and results one toolhost.plan session holds", func(s *Settings) *int { return &s.PlanMaxSessionBytes }),
		flag("reuse", "auto", `warm instances: "auto" (tools whose manifest says "instances": "reuse" keep one caller's instances between its calls, unless the config says reuse = false) or "never" (a fresh instance for every call, whatever the manifest says)`, func(s *Settings) *string { return &s.Reuse }),
		flag("tool-names", "safe", `names tools are listed under: "safe" (text.count as text_count, what every MCP client accepts) or "exact" (manifest names)`, func(s *Settings) *string { return &s.ToolNames }),

		// The HTTP listener's edges: connections, sessions, time, origins.
		flag("allow-origin", []string(nil), "a browser origin (scheme://host[:port]) allowed to call the server (repeatable); requests from any other origin get 403", func(s *Settings) *[]string { return &s.AllowOrigins }),
		flag("read-timeout", 30*time.Second, "how long a request (headers and body) may take to arrive; streams and long calls are not cut by it", func(s *Settings) *time.Duration { return &s.ReadTimeout }),
		flag("idle-timeout", 2*time.Minute, "close keep-alive connections idle this long", func(s *Settings) *time.Duration { return &s.IdleTimeout }),
		flag("max-conns", 1024, "most open HTTP connections; when full, the idle connection that has not authenticated for longest is closed, else more get 503 (0: no limit)", func(s *Settings) *int { return &s.MaxConns }),
		keyed("max-conns-per-peer", 256, "most open HTTP connections from one client address (an IPv4 address or an IPv6 /64); more get 429 (0: no limit; raise it behind a proxy, whose address every connection shares)", func(s *Settings) *int { return &s.MaxConnsPerPeer },
			"[http] max_conns_per_peer", func(c *config.Config) *int { return c.HTTP.MaxConnsPerPeer }),
		flag("max-sessions-per-caller", 64, "most concurrent MCP sessions over HTTP for one caller (one token identity)", func(s *Settings) *int { return &s.MaxSessionsPerCaller }),

		// Who sees which events, and how much streams and keys may hold.
		flag("operator", []string(nil), "token identity that may see every identity's calls on /events (repeatable); others see only their own", func(s *Settings) *[]string { return &s.Operators }),
		flag("max-event-streams", events.DefaultMaxStreams, "most /events streams open at once", func(s *Settings) *int { return &s.MaxEventStreams }),
		flag("max-event-streams-per-identity", events.DefaultMaxStreamsPerIdentity, "most /events streams one identity may hold open", func(s *Settings) *int { return &s.MaxEventStreamsPerIdentity }),
		flag("idempotency-max-keys", idempotency.DefaultMaxKeys, "most idempotency keys held (running or kept for replay); beyond, keyed calls are rate_limited", func(s *Settings) *int { return &s.Idempotency.MaxKeys }),
		flag("idempotency-max-keys-per-identity", idempotency.DefaultMaxKeysPerCaller, "most idempotency keys one identity may hold", func(s *Settings) *int { return &s.Idempotency.MaxKeysPerCaller }),
		flag("idempotency-max-bytes", int64(idempotency.DefaultMaxBytes), "most bytes of kept outcomes (results and keys) the idempotency store holds", func(s *Settings) *int64 { return &s.Idempotency.MaxBytes }),
		flag("idempotency-max-bytes-per-identity", int64(idempotency.DefaultMaxBytesPerCaller), "most idempotency store bytes one identity may hold", func(s *Settings) *int64 { return &s.Idempotency.MaxBytesPerCaller }),

		// When modules' code is compiled and kept, and how many fresh
		// instances run at once.
		keyed("lazy", true, "serve at once: list modules described before (the describe cache) or carrying their manifest (toolhost manifest embed) without compiling them (each compiles in the background, or on its first call, which waits for it under the caller's deadline, not the tool's timeout), and compile the others in the background, listing each when done (/readyz says 503 until all are; a tools/list waits for them); --lazy=false compiles every module before serving", func(s *Settings) *bool { return &s.Lazy },
			"[runtime] lazy", func(c *config.Config) *bool { return c.Runtime.Lazy }),
		keyed("warm-up", true, "with --lazy (the default), compile the modules listed from the describe cache in the background after the start, so most first calls find them ready", func(s *Settings) *bool { return &s.WarmUp },
			"[runtime] warm_up", func(c *config.Config) *bool { return c.Runtime.WarmUp }),
		keyed("interpret", true, "with --lazy (the default), a call for a listed module whose code is not in the compilation cache runs on wazero's interpreter while the module compiles, instead of waiting seconds: about ten times slower per call, so one that needs more than a tenth of its timeout may time out; one module of at most 6 MiB at a time, holding its functions translated for the interpreter (those its calls reached: about 8 MiB for a Go tool's first call, at most about 30 bytes per byte of code) until its compile ends; a cold module without a manifest section is listed from its describe on the interpreter, not after its compile", func(s *Settings) *bool { return &s.Interpret },
			"[runtime] interpret", func(c *config.Config) *bool { return c.Runtime.Interpret }),
		keyed("max-fresh", 4*runtime.GOMAXPROCS(0), "most fresh instances made and run at once; more calls queue under their deadline (0: no bound). Near the CPU count keeps latency and memory bounded when the CPU is saturated", func(s *Settings) *int { return &s.MaxFresh },
			"[runtime] max_fresh", func(c *config.Config) *int { return c.Runtime.MaxFresh }),
		keyed("max-resident", 0, "most modules whose compiled code stays in memory; idle ones past it are released and compiled again (from the cache) on their next call (0: no limit)", func(s *Settings) *int { return &s.MaxResident },
			"[runtime] max_resident", func(c *config.Config) *int { return c.Runtime.MaxResident }),

		keyed("redis", "", "share idempotency keys, quotas and breaker openings with other replicas through Redis at this URL (redis://host:port/db); overrides [redis] url (docs/SCALING.md)", func(s *Settings) *string { return &s.Redis },
			"[redis] url", func(c *config.Config) *string { return str(&c.Redis.URL) }),
	}
}

// Bind registers every flag of the table on fs, each setting its field of
// s, and sets those fields to their defaults.
func (s *Settings) Bind(fs *pflag.FlagSet) {
	for _, f := range Flags() {
		f.bind(fs, s)
	}
}

// Default is the Settings of `toolhost serve` with no flags and no file.
func Default() Settings {
	var s Settings
	s.Bind(pflag.NewFlagSet("serve", pflag.ContinueOnError))
	return s
}

// LoadFile reads the file s.Config names (nothing when it is empty) into
// s.File, resolving its secrets, and then gives each flag that given
// (the command line's record) says was not given the file's value, where
// the file sets its key. A nil given means no flag was given.
func (s *Settings) LoadFile(given func(flag string) bool) error {
	c, err := LoadConfig(s.Config)
	if err != nil {
		return err
	}
	s.File = c
	s.applyFile(given)
	return nil
}

// applyFile is the one place a flag wins over the file.
func (s *Settings) applyFile(given func(flag string) bool) {
	if s.File == nil {
		return
	}
	for _, f := range Flags() {
		if f.take != nil && (given == nil || !given(f.Name)) {
			f.take(s, s.File)
		}
	}
}
