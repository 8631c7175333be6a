// Package console serves the operator's web console at /ui: a read-only
// view of the tools (every module file and its state), circuit breakers,
// governor quotas, plan sessions, running tasks, live calls and a chart of calls/s and
// latency, rendered on the server with
// small escaping writers (render.go) and refreshed by a little plain
// JavaScript.
//
// It obeys the rules of the server's other endpoints: the same bearer
// tokens (a browser sends the token it was given once, kept in
// sessionStorage, as an Authorization header; never in a URL), the same
// access rules (a caller sees the tools tools/list would show it, and only
// its own calls unless it is an operator), and the same-origin rule of the
// listener's Origin guard. Every answer carries a strict
// Content-Security-Policy: no inline script, script-src 'self'.
package console

import (
	"context"
	"embed"
	"io/fs"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"

	"github.com/toolhost/toolhost/access"
	"github.com/toolhost/toolhost/breaker"
	"github.com/toolhost/toolhost/dispatcher"
	"github.com/toolhost/toolhost/events"
	"github.com/toolhost/toolhost/governor"
	"github.com/toolhost/toolhost/loader"
	"github.com/toolhost/toolhost/registry"
)

//go:embed static
var files embed.FS

// Pool is one tool's warm instances (all callers and module versions
// together).
type Pool struct {
	Tool                         string
	Idle, Busy, Warming, Callers int
}

// Sources are where the console reads the server's state; each is called
// on every render, concurrently, and a nil one leaves its view empty.
type Sources struct {
	// Files are the plugins folder's module files and their states.
	Files func() []loader.FileState
	// Tools is the registry served now.
	Tools func() *registry.Registry
	// Pools are the warm-instance pools.
	Pools func() []Pool
	// Breakers are the circuit breakers (dispatcher.Breakers).
	Breakers func() []breaker.Status
	// Quotas are the governor's quotas (governor.Status).
	Quotas func(context.Context) []governor.State
	// Tasks are the MCP tasks running on this server
	// (transport.Server.RunningTasks).
	Tasks func() []Task
	// Events is the bus the dispatcher publishes calls on.
	Events *events.Bus
}

// Options configure a Console. The zero value of each field is its
// default.
type Options struct {
	Sources
	// Auth wraps a handler to demand a bearer token, as every other
	// endpoint of the listener is wrapped; nil means the server has no
	// authentication (every caller sees everything, as on /events).
	Auth func(http.Handler) http.Handler
	// Access is the server's access policy (nil allows everything).
	Access *access.Policy
	// Operator reports whether an identity sees every caller's calls and
	// governor use, and the module files that serve no tool; nil: none.
	Operator func(identity string) bool
	// Version is the server's version, shown in the header.
	Version string
	// Now is the clock cool-downs are measured with; nil is time.Now.
	Now func() time.Time
	// Recent is how many finished calls the calls view keeps; 0 is 200.
	Recent int
	// Plans is how many plan sessions the plans view keeps; 0 is 50.
	Plans int
	// MaxStreams caps the live call streams open at once (0 is 16), and
	// MaxStreamsPerIdentity one identity's (0 is 4).
	MaxStreams, MaxStreamsPerIdentity int
}

// Console serves /ui. It is safe for concurrent use.
type Console struct {
	opts    Options
	static  http.Handler
	recent  *recent
	chart   *charts
	plans   *sessions
	streams *streamCount
	done    chan struct{}
	// closing closes done once: http.Server.Shutdown runs CloseStreams on
	// a goroutine of its own, while the server's Close calls it too.
	closing sync.Once
	stop    context.CancelFunc
}

// New returns a console reading from opts.Sources; it follows the event
// bus (for the calls view) until Close.
func New(opts Options) *Console {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	sub, _ := fs.Sub(files, "static")
	c := &Console{
		opts:    opts,
		static:  http.StripPrefix("/ui/static/", http.FileServerFS(sub)),
		recent:  newRecent(orDefault(opts.Recent, 200)),
		chart:   newCharts(),
		plans:   newSessions(orDefault(opts.Plans, 50)),
		streams: newStreamCount(orDefault(opts.MaxStreams, 16), orDefault(opts.MaxStreamsPerIdentity, 4)),
		done:    make(chan struct{}),
	}
	ctx, stop := context.WithCancel(context.Background())
	c.stop = stop
	if opts.Events != nil {
		// Observed, on the publisher's goroutine: a subscription's
		// goroutine would be woken for every call. What it does is short:
		// charts.add never waits for the chart's render, and recent's
		// lock is held by a render only to copy its rows.
		observe(ctx, opts.Events, []string{dispatcher.EventResult}, func(e events.Event) {
			if row, ok := rowOf(e); ok {
				c.recent.add(row)
				c.chart.add(e.Caller, e.Time, time.Duration(row.DurationMS*float64(time.Millisecond)), row.Outcome != "ok")
			}
		})
		follow(ctx, opts.Events, planPrefixes, c.plans.add)
	}
	return c
}

// Close stops following the event bus and ends the live streams.
func (c *Console) Close() {
	c.stop()
	c.CloseStreams()
}

// CloseStreams ends every live call stream (they never end by
// themselves): register it with http.Server.RegisterOnShutdown. It may be
// called more than once, from several goroutines at a time.
func (c *Console) CloseStreams() {
	c.closing.Do(func() { close(c.done) })
}

// Handler serves GET /ui and everything under /ui/: mount it at both.
// /ui without an Authorization header answers 401 with the sign-in page
// (when the server has authentication); /ui/static/ (the script and the
// style sheet, which hold no data) is public; everything else is behind
// Options.Auth.
func (c *Console) Handler() http.Handler {
	guard := func(h http.Handler) http.Handler { return h }
	if c.opts.Auth != nil {
		guard = c.opts.Auth
	}
	page, views, calls := guard(http.HandlerFunc(c.servePage)), guard(http.HandlerFunc(c.serveView)), guard(http.HandlerFunc(c.serveCalls))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		secureHeaders(w.Header())
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "the console is read-only: GET only", http.StatusMethodNotAllowed)
			return
		}
		switch p := r.URL.Path; {
		case p == "/ui" || p == "/ui/":
			if c.opts.Auth != nil && r.Header.Get("Authorization") == "" {
				c.serveSignIn(w, r)
				return
			}
			page.ServeHTTP(w, r)
		case strings.HasPrefix(p, "/ui/static/"):
			w.Header().Set("Cache-Control", "no-cache")
			c.static.ServeHTTP(w, r)
		case strings.HasPrefix(p, "/ui/view/"):
			views.ServeHTTP(w, r)
		case p == "/ui/calls":
			calls.ServeHTTP(w, r)
		default:
			http.NotFound(w, r)
		}
	})
}

// csp allows the console's own script, style sheet and fetches, and
// nothing else: no inline script or style, no frames, no form posts.
const csp = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; " +
	"base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

func secureHeaders(h http.Header) {
	h.Set("Content-Security-Policy", csp)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cache-Control", "no-store")
}

// viewer is who a page is rendered for.
type viewer struct {
	identity string
	scopes   []string
	// all: an operator, or a server without authentication.
	all bool
}

func (c *Console) viewerOf(r *http.Request) viewer {
	v := viewer{all: c.opts.Auth == nil}
	if ti := auth.TokenInfoFromContext(r.Context()); ti != nil {
		v.identity, v.scopes = ti.UserID, ti.Scopes
		v.all = v.all || (c.opts.Operator != nil && c.opts.Operator(ti.UserID))
	}
	return v
}

// mayList: the caller would see the tool in tools/list.
func (c *Console) mayList(v viewer, t *registry.Tool) bool {
	return !t.Hidden && c.opts.Access.Decide(v.identity, v.scopes, t.Name).Allowed
}

func orDefault(v, def int) int {
	if v <= 0 {
		return def
	}
	return v
}
