package server

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"

	"github.com/toolhost/toolhost/internal/oauth"
	"github.com/toolhost/toolhost/transport"
)

// authGuard returns what wraps each HTTP endpoint to demand a token: the
// static tokens, and with [auth.oauth] (oc not nil) OAuth access tokens
// too, whose Protected Resource Metadata it mounts on mux. addr is where
// the server listens: the resource URL defaults to http://ADDR/mcp there
// when it is loopback.
func authGuard(ctx context.Context, oc *oauth.Config, tokens *transport.Tokens, addr net.Addr, mux *http.ServeMux, logger *slog.Logger) (func(http.Handler) http.Handler, error) {
	if oc == nil {
		return tokens.Require, nil
	}
	cfg := *oc
	cfg.Logger = logger
	if cfg.Resource == "" {
		if !isLoopback(addr.String()) {
			return nil, fmt.Errorf(`[auth.oauth] needs resource = "https://…/mcp" when serving on %s: the URL clients reach /mcp at, which tokens must be issued for (RFC 8707)`, addr)
		}
		cfg.Resource = "http://" + addr.String() + "/mcp"
	}
	v, err := oauth.New(cfg)
	if err != nil {
		return nil, fmt.Errorf("[auth.oauth] %w", err)
	}
	for path, h := range v.MetadataHandlers() {
		mux.Handle(path, h)
	}
	logger.Info("accepting OAuth access tokens", "issuer", cfg.Issuer, "resource", cfg.Resource, "metadata", v.MetadataURL())
	go func() {
		// Early word of a misconfigured issuer; tokens are refused with
		// 503 until it answers.
		if err := v.Discover(ctx); err != nil {
			logger.Warn("the OAuth issuer's keys cannot be fetched yet", "issuer", cfg.Issuer, "err", err)
		}
	}()
	return func(h http.Handler) http.Handler { return transport.RequireAny(tokens, v, h) }, nil
}
