package main

import (
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/spf13/cobra"
	"github.com/toolhost/toolhost/internal/config"
	"github.com/toolhost/toolhost/transport"
)

// addEdgeFlags adds the flags that bound what a client can hold of the
// HTTP server (connections, sessions, time) and which browser origins may
// reach it.
func addEdgeFlags(cmd *cobra.Command, f *serveFlags) {
	fl := cmd.Flags()
	fl.StringArrayVar(&f.allowOrigins, "allow-origin", nil, "a browser origin (scheme://host[:port]) allowed to call the server (repeatable); requests from any other origin get 403")
	fl.DurationVar(&f.readTimeout, "read-timeout", 30*time.Second, "how long a request (headers and body) may take to arrive; streams and long calls are not cut by it")
	fl.DurationVar(&f.idleTimeout, "idle-timeout", 2*time.Minute, "close keep-alive connections idle this long")
	fl.IntVar(&f.maxConns, "max-conns", 1024, "most open HTTP connections; when full, the idle connection that has not authenticated for longest is closed, else more get 503 (0: no limit)")
	fl.IntVar(&f.maxConnsPerPeer, "max-conns-per-peer", 256, "most open HTTP connections from one client address (an IPv4 address or an IPv6 /64); more get 429 (0: no limit; raise it behind a proxy, whose address every connection shares)")
	fl.IntVar(&f.maxSessionsCaller, "max-sessions-per-caller", 64, "most concurrent MCP sessions over HTTP for one caller (one token identity)")
}

// edgeFromConfig takes the [http] keys of the config file for the flags
// the command line did not set: a flag given wins over the file. They are
// read at start; a config reload does not change them.
func edgeFromConfig(cmd *cobra.Command, c *config.Config, f *serveFlags) {
	if c == nil {
		return
	}
	if n := c.HTTP.MaxConnsPerPeer; n != nil && !cmd.Flags().Changed("max-conns-per-peer") {
		f.maxConnsPerPeer = *n
	}
}

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
func edgeServer(mux http.Handler, f serveFlags) (net.Listener, *http.Server, error) {
	origins, err := transport.ParseOrigins(f.allowOrigins)
	if err != nil {
		return nil, nil, fmt.Errorf("--allow-origin: %w", err)
	}
	ln, err := net.Listen("tcp", f.addr)
	if err != nil {
		return nil, nil, fmt.Errorf("listen on %s: %w", f.addr, err)
	}
	hs := &http.Server{
		Handler:           origins.Guard(mux),
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       f.readTimeout,
		IdleTimeout:       f.idleTimeout,
	}
	conns := transport.LimitConns(ln, transport.ConnLimits{Max: f.maxConns, PerPeer: f.maxConnsPerPeer})
	conns.Install(hs)
	return conns, hs, nil
}
