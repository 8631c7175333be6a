package toolhostv1

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

	"github.com/toolhost/toolhost/internal/hostconf"
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

// Grant is what one module may reach (hostconf.Grant: the config file
// checker fills it in without linking WebAssembly).
type Grant = hostconf.Grant

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

// Grants are an Egress configuration checked and ready: each module's
// grant with its HTTP client. Safe for concurrent use.
type Grants struct {
	grants map[string]*grant
}

// NewGrants checks every grant of cfg (host patterns, methods, schemes,
// headers, networks) and builds its HTTP client. An error names the
// module whose grant is wrong and what is wrong with it.
func NewGrants(cfg Egress) (*Grants, error) {
	e := &Grants{grants: make(map[string]*grant, len(cfg.Grants))}
	for _, module := range slices.Sorted(maps.Keys(cfg.Grants)) {
		g, err := compileGrant(module, cfg.Grants[module], cfg.Governor)
		if err != nil {
			return nil, fmt.Errorf("egress grant for %s: %w", module, err)
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

// OpenWorld reports whether module (a file name, as grants are keyed)
// has a grant that reaches at least one host.
func (e *Grants) OpenWorld(module string) bool {
	g := e.grants[module]
	return g != nil && len(g.hosts) > 0
}

// Close closes the idle connections of every grant's client.
func (e *Grants) Close() {
	for _, g := range e.grants {
		g.tr.CloseIdleConnections()
	}
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
