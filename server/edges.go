package server

import (
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/toolhost/toolhost/transport"
)

// edgeServer listens on f.addr and builds the HTTP server around mux: the
// Origin and Host checks in front of every endpoint, read, header and
// idle timeouts, and the connection limits (transport.Conns: global and
// per peer, with unauthenticated connections the first to go).
//
// ReadTimeout bounds the request up to the end of its body and no
// further: net/http lifts the connection's read deadline once the body is
// read, so a long tool call or an event stream is not cut by it. There is
// deliberately no WriteTimeout: it would end GET /mcp and /events streams,
// which are meant to stay open; sessions are bounded by --session-timeout
// and the caps instead.
func edgeServer(mux http.Handler, s Settings) (net.Listener, *http.Server, error) {
	origins, err := transport.ParseOrigins(s.AllowOrigins)
	if err != nil {
		return nil, nil, fmt.Errorf("--allow-origin: %w", err)
	}
	ln, err := net.Listen("tcp", s.Addr)
	if err != nil {
		return nil, nil, fmt.Errorf("listen on %s: %w", s.Addr, err)
	}
	hs := &http.Server{
		Handler:           origins.Guard(mux),
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       s.ReadTimeout,
		IdleTimeout:       s.IdleTimeout,
	}
	conns := transport.LimitConns(ln, transport.ConnLimits{Max: s.MaxConns, PerPeer: s.MaxConnsPerPeer})
	conns.Install(hs)
	return conns, hs, nil
}

// isLoopback reports whether addr binds only loopback addresses. An empty
// host (":7331") binds every interface.
func isLoopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil || host == "" {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
