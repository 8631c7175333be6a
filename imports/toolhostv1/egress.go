package host

import (
	"context"
	"fmt"
	"maps"
	"net"
	"net/http"
	"net/netip"
	"slices"
	"strings"
	"time"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/toolhost/toolhost/abi"
	"github.com/toolhost/toolhost/internal/hostmatch"
)

// Egress configures governed egress: outbound HTTP for tool modules,
// through the toolhost_v1 host functions (abi.ImportHTTPRequest), as far as
// the operator's grant for each module allows. The zero value grants no
// module anything.
type Egress struct {
	// Grants are the operator's grants, by module file name
	// ("fetch.wasm"). A module without one may import toolhost_v1 and
	// load, but each request it makes is refused naming the missing grant.
	Grants map[string]Grant
	// Governor, when set, is asked before every request (and every
	// redirect hop) and told of every 429 and 503; nil means none.
	Governor EgressGovernor
}

// EgressGovernor is what egress needs of a rate governor (package
// governor implements it). Both methods must be safe for concurrent use.
type EgressGovernor interface {
	// AcquireHost waits until a request to hostname:port may go, within
	// ctx's deadline. An error refuses it; if the error has a
	// RetryAfterDuration() time.Duration method, the guest is told when to
	// try again.
	AcquireHost(ctx context.Context, hostname, port string) error
	// ReportHost reports an upstream 429 or 503 and its Retry-After (0
	// when it sent none).
	ReportHost(ctx context.Context, hostname, port string, status int, retryAfter time.Duration)
}

// Grant is what one module may reach. Zero fields take the documented
// defaults; Hosts has none: a grant without hosts reaches nothing.
type Grant struct {
	// Hosts are the host patterns a request (and every redirect hop) may
	// go to: exact names or IP literals, or "*.suffix"; optionally with
	// ":PORT".
	Hosts []string
	// Methods are the HTTP methods allowed; empty means GET and HEAD.
	Methods []string
	// Schemes are the URL schemes allowed; empty means https only (an
	// injected API key must not cross the network in clear).
	Schemes []string
	// MaxRequestBytes caps a request body; 0 means 1 MiB.
	MaxRequestBytes int64
	// MaxResponseBytes caps a response body; 0 means 1 MiB.
	MaxResponseBytes int64
	// Headers are injected into requests to hosts matching each pattern
	// (the most specific pattern wins), replacing any header of the same
	// name the guest set. The guest never sees them.
	Headers map[string]map[string]string
	// AllowNetworks are address ranges a request may dial although they
	// are loopback, private, link-local, metadata or otherwise not
	// public. Without them such addresses are refused, whatever name led
	// there.
	AllowNetworks []netip.Prefix
}

// Defaults for Grant fields left at zero.
const (
	DefaultMaxRequestBytes  = 1 << 20
	DefaultMaxResponseBytes = 1 << 20
	// maxRedirects bounds a request's redirect chain.
	maxRedirects = 10
)

// grant is a checked Grant with its HTTP client.
type grant struct {
	module   string
	hosts    []hostmatch.Pattern
	methods  []string
	schemes  []string
	maxReq   int64
	maxResp  int64
	headers  []hostHeaders
	hpats    []hostmatch.Pattern // headers[i].pattern, for hostmatch.Best
	networks []netip.Prefix
	gov      EgressGovernor
	client   *http.Client
	tr       *http.Transport
}

type hostHeaders struct {
	pattern hostmatch.Pattern
	header  http.Header
}

// egress is the runtime's compiled egress configuration.
type egress struct {
	grants map[string]*grant
}

func newEgress(cfg Egress) (*egress, error) {
	e := &egress{grants: make(map[string]*grant, len(cfg.Grants))}
	for _, module := range slices.Sorted(maps.Keys(cfg.Grants)) {
		g, err := compileGrant(module, cfg.Grants[module], cfg.Governor)
		if err != nil {
			return nil, fmt.Errorf("host: egress grant for %s: %w", module, err)
		}
		e.grants[module] = g
	}
	return e, nil
}

func compileGrant(module string, cfg Grant, gov EgressGovernor) (*grant, error) {
	g := &grant{module: module, gov: gov, maxReq: cfg.MaxRequestBytes, maxResp: cfg.MaxResponseBytes,
		networks: slices.Clone(cfg.AllowNetworks)}
	if g.maxReq <= 0 {
		g.maxReq = DefaultMaxRequestBytes
	}
	if g.maxResp <= 0 {
		g.maxResp = DefaultMaxResponseBytes
	}
	for _, h := range cfg.Hosts {
		p, err := hostmatch.Parse(h)
		if err != nil {
			return nil, err
		}
		g.hosts = append(g.hosts, p)
	}
	g.methods = []string{http.MethodGet, http.MethodHead}
	if len(cfg.Methods) > 0 {
		g.methods = nil
		for _, m := range cfg.Methods {
			if !validToken(m) {
				return nil, fmt.Errorf("method %q is not an HTTP method name", m)
			}
			g.methods = append(g.methods, strings.ToUpper(m))
		}
	}
	g.schemes = []string{"https"}
	if len(cfg.Schemes) > 0 {
		g.schemes = nil
		for _, s := range cfg.Schemes {
			if s = strings.ToLower(s); s != "http" && s != "https" {
				return nil, fmt.Errorf("scheme %q: only http and https are possible", s)
			}
			g.schemes = append(g.schemes, s)
		}
	}
	for _, pat := range slices.Sorted(maps.Keys(cfg.Headers)) {
		p, err := hostmatch.Parse(pat)
		if err != nil {
			return nil, fmt.Errorf("headers: %w", err)
		}
		h := make(http.Header)
		for name, v := range cfg.Headers[pat] {
			if forbiddenHeader(name) {
				return nil, fmt.Errorf("headers for %s: %s is set by the host and cannot be injected", pat, name)
			}
			h.Set(name, v)
		}
		g.headers = append(g.headers, hostHeaders{p, h})
		g.hpats = append(g.hpats, p)
	}
	for _, n := range g.networks {
		if !n.IsValid() {
			return nil, fmt.Errorf("allow_networks: invalid prefix")
		}
	}
	dialer := &net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second, Control: g.checkDial}
	g.tr = &http.Transport{
		Proxy:                  nil, // a proxy would dial for us and defeat the address check
		DialContext:            dialer.DialContext,
		ForceAttemptHTTP2:      true,
		MaxIdleConns:           64,
		IdleConnTimeout:        90 * time.Second,
		TLSHandshakeTimeout:    10 * time.Second,
		ExpectContinueTimeout:  time.Second,
		MaxResponseHeaderBytes: 64 << 10,
	}
	g.client = &http.Client{Transport: injector{g}, CheckRedirect: g.checkRedirect}
	return g, nil
}

// injector adds the grant's headers for each hop's host. It works on a
// clone, so the headers are never in the request the http.Client copies
// to the next hop, and never reach another host.
type injector struct{ g *grant }

func (i injector) RoundTrip(req *http.Request) (*http.Response, error) {
	// portOf, not URL.Port: a URL without a port ("https://api.example.com/")
	// goes to the scheme's default one, and a pattern naming it
	// ("api.example.com:443") must match it, as the grant's hosts do.
	if h := i.g.headersFor(req.URL.Hostname(), portOf(req.URL)); h != nil {
		req = req.Clone(req.Context())
		for name, v := range h {
			req.Header[name] = v
		}
	}
	return i.g.tr.RoundTrip(req)
}

func (g *grant) headersFor(host, port string) http.Header {
	if i := hostmatch.Best(g.hpats, host, port); i >= 0 {
		return g.headers[i].header
	}
	return nil
}

// instantiate registers the toolhost_v1 host module in rt. Every module
// may import it; what a call may do is decided per call, from the grant of
// the module making it (see Module.Call).
func (e *egress) instantiate(ctx context.Context, rt wazero.Runtime) error {
	i32 := api.ValueTypeI32
	_, err := rt.NewHostModuleBuilder(abi.ImportModule).
		NewFunctionBuilder().WithGoModuleFunction(api.GoModuleFunc(httpRequest), []api.ValueType{i32, i32}, []api.ValueType{i32}).
		WithParameterNames("req_ptr", "req_len").Export(abi.ImportHTTPRequest).
		NewFunctionBuilder().WithGoModuleFunction(api.GoModuleFunc(httpResponse), []api.ValueType{i32, i32}, []api.ValueType{i32}).
		WithParameterNames("buf_ptr", "buf_len").Export(abi.ImportHTTPResponse).
		Instantiate(ctx)
	return err
}

func (e *egress) close() {
	for _, g := range e.grants {
		g.tr.CloseIdleConnections()
	}
}

// egressCall is one tool call's egress state, carried in its context.
type egressCall struct {
	module  string
	grant   *grant           // nil: the module has no grant
	loading bool             // describe, not a call: no egress
	pending []byte           // the last result JSON, until http_response copies it
	refused *abi.EgressError // the first request the host refused, if any
}

// EgressRefusedError is a failed call during which the host refused one
// of the tool's egress requests: the grant did not allow it, it was
// malformed, or the rate governor could not grant it in time. Such a
// failure is the caller's or the operator's doing, not the tool's (a
// client could otherwise open a granted tool's circuit breaker by asking
// it for URLs it may not fetch), so the dispatcher does not count it
// against the tool. Err is the call's own error (an *abi.Error or a
// *Fault), reachable with errors.As.
type EgressRefusedError struct {
	Err     error
	Refusal *abi.EgressError
}

func (e *EgressRefusedError) Error() string { return e.Err.Error() }

// Unwrap returns the call's own error.
func (e *EgressRefusedError) Unwrap() error { return e.Err }

// EgressRefusal returns the first egress request the host refused.
func (e *EgressRefusedError) EgressRefusal() *abi.EgressError { return e.Refusal }

// blame wraps a failed call's error in an *EgressRefusedError when the
// host refused one of its requests.
func (c *egressCall) blame(err error) error {
	if err == nil || c.refused == nil {
		return err
	}
	return &EgressRefusedError{Err: err, Refusal: c.refused}
}

// refusal reports whether the host, not the network or the upstream,
// turned a request down.
func refusal(e *abi.EgressError) bool {
	switch e.Kind {
	case abi.EgressDenied, abi.EgressInvalid, abi.EgressRateLimited:
		return true
	}
	return false
}

type egressKey struct{}

// withEgress returns ctx carrying a fresh egress state for one call of m.
func (m *Module) withEgress(ctx context.Context) context.Context {
	ctx, _ = m.egressState(ctx)
	return ctx
}

// egressState is withEgress that also returns the state, to read after
// the call.
func (m *Module) egressState(ctx context.Context) (context.Context, *egressCall) {
	name := moduleName(m.Path)
	c := &egressCall{module: name, grant: m.rt.egress.grants[name]}
	return context.WithValue(ctx, egressKey{}, c), c
}

// moduleName is the file name grants are keyed by.
func moduleName(path string) string {
	if i := strings.LastIndexAny(path, `/\`); i >= 0 {
		return path[i+1:]
	}
	return path
}

// validToken reports whether m is an HTTP token (a method or header name).
func validToken(m string) bool {
	if m == "" {
		return false
	}
	for _, c := range m {
		if c > 127 || !strings.ContainsRune("!#$%&'*+-.^_`|~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz", c) {
			return false
		}
	}
	return true
}

// forbiddenHeader names the headers the host sets itself.
func forbiddenHeader(name string) bool {
	switch http.CanonicalHeaderKey(name) {
	case "Host", "Content-Length", "Transfer-Encoding", "Connection", "Keep-Alive", "Upgrade", "Te", "Trailer",
		"Proxy-Authorization", "Proxy-Authenticate", "Proxy-Connection":
		return true
	}
	return false
}
