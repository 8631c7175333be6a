package transport

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
)

// Origins are the browser origins allowed to call the server. The zero
// value allows none: a web page must never reach a toolhost (MCP's
// security best practices: any page could otherwise run the operator's
// tools, or read /events and /metrics through DNS rebinding).
type Origins struct {
	allowed map[string]bool
}

// ParseOrigins checks each origin ("scheme://host[:port]", as browsers send
// it in the Origin header) and returns the set.
func ParseOrigins(origins []string) (Origins, error) {
	o := Origins{allowed: map[string]bool{}}
	for _, s := range origins {
		norm, ok := normalOrigin(s)
		if !ok {
			return Origins{}, fmt.Errorf("origin %q: want scheme://host[:port] with nothing after it, e.g. http://localhost:6274", s)
		}
		o.allowed[norm] = true
	}
	return o, nil
}

// normalOrigin lower-cases an origin and checks it has no path, query or
// user. Browsers send origins in this form already.
func normalOrigin(s string) (string, bool) {
	u, err := url.Parse(strings.ToLower(s))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" ||
		(u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.User != nil || u.Fragment != "" {
		return "", false
	}
	return u.Scheme + "://" + u.Host, true
}

// Guard refuses, with 403 and a JSON-RPC error, every request that a
// browser makes from an origin not in o and not the request's own (same
// scheme, host and port: a page the server itself serves), and, on a connection to a
// loopback address, every request whose Host is not a loopback name (DNS
// rebinding: a page of evil.example whose name now resolves to 127.0.0.1
// sends Host: evil.example). It wraps the whole mux, so /mcp, /events,
// /metrics, /rpc, /healthz and /readyz all get the same rules; the SDK's
// own check covered /mcp alone.
//
// An allowed origin gets the CORS headers a browser needs to read the
// answers (and preflight requests are answered here).
func (o Origins) Guard(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if why := badHost(r); why != "" {
			forbid(w, r, why)
			return
		}
		origin := r.Header.Get("Origin")
		if origin == "" {
			// Browsers send Origin on every cross-origin request that can
			// read its answer; Sec-Fetch-Site catches the rest of theirs.
			if site := r.Header.Get("Sec-Fetch-Site"); site == "cross-site" || site == "same-site" {
				forbid(w, r, "cross-site requests from browsers are refused")
				return
			}
			h.ServeHTTP(w, r)
			return
		}
		norm, ok := normalOrigin(origin)
		if ok && norm == ownOrigin(r) {
			// A page this server served calling it back, as
			// net/http.CrossOriginProtection allows: no CORS headers are
			// needed. A rebinding page names its own host and is caught
			// by the loopback Host rule above; off loopback serve
			// requires tokens, which no page of another site holds.
			h.ServeHTTP(w, r)
			return
		}
		if !ok || !o.allowed[norm] {
			forbid(w, r, fmt.Sprintf("origin %q is not allowed (serve --allow-origin allows one)", origin))
			return
		}
		hdr := w.Header()
		hdr.Set("Access-Control-Allow-Origin", origin)
		hdr.Add("Vary", "Origin")
		hdr.Set("Access-Control-Expose-Headers", "Mcp-Session-Id, Mcp-Protocol-Version, WWW-Authenticate")
		if r.Method == http.MethodOptions && r.Header.Get("Access-Control-Request-Method") != "" {
			hdr.Set("Access-Control-Allow-Methods", "GET, POST, DELETE")
			hdr.Set("Access-Control-Allow-Headers", "Authorization, Content-Type, Accept, Last-Event-ID, Mcp-Session-Id, Mcp-Protocol-Version")
			hdr.Set("Access-Control-Max-Age", "600")
			w.WriteHeader(http.StatusNoContent)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// ownOrigin is the origin of the request's own URL: its scheme and its
// Host (host and port), in normalOrigin's form.
func ownOrigin(r *http.Request) string {
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + strings.ToLower(r.Host)
}

// badHost applies the loopback Host rule: a request that arrived on a
// loopback address must name a loopback host.
func badHost(r *http.Request) string {
	local, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	if !ok || local == nil || !isLoopbackHost(local.String()) || isLoopbackHost(r.Host) {
		return ""
	}
	return fmt.Sprintf("invalid Host header %q: this server is reached on loopback, so the host must be a loopback name (DNS rebinding protection)", r.Host)
}

// isLoopbackHost reports whether hostport ("localhost:7331", "[::1]",
// "127.0.0.1") names a loopback host.
func isLoopbackHost(hostport string) bool {
	host, _, err := net.SplitHostPort(hostport)
	if err != nil {
		host = strings.Trim(hostport, "[]")
	}
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.Unmap().IsLoopback()
}

// forbid answers 403 with a JSON-RPC error without an id, the body MCP's
// transport spec suggests for a refused origin; the connection closes
// after it unless it has authenticated before.
func forbid(w http.ResponseWriter, r *http.Request, why string) {
	closeUnlessAuthenticated(w, r)
	writeRPCError(w, http.StatusForbidden, -32600, "forbidden: "+why)
}

// writeRPCError answers status with a JSON-RPC error whose id is null.
func writeRPCError(w http.ResponseWriter, status, code int, message string) {
	b, _ := json.Marshal(map[string]any{
		"jsonrpc": "2.0", "id": nil,
		"error": map[string]any{"code": code, "message": message},
	})
	w.Header().Set("Content-Type", "application/json")
	w.Header().Del("Content-Length")
	w.WriteHeader(status)
	_, _ = w.Write(append(b, '\n'))
}
