package transport

import (
	"context"
	"net"
	"net/http"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"
)

// ConnLimits bounds what clients can hold of an HTTP server's
// connections (see LimitConns). The zero value limits nothing but the
// idle time of connections that have not authenticated.
type ConnLimits struct {
	// Max is the most connections open at once; 0 is no limit.
	Max int
	// PerPeer is the most connections one peer holds at once; 0 is no
	// limit. A peer is an IPv4 address, or an IPv6 /64 (what one host is
	// usually given; an IPv4-mapped IPv6 address is its IPv4 address).
	// Each loopback address is a peer of its own.
	PerPeer int
	// UnauthenticatedIdle is the keep-alive idle timeout of a connection
	// that no request has authenticated on yet; 0 means
	// DefaultUnauthenticatedIdle. The server's IdleTimeout applies when
	// it is shorter.
	UnauthenticatedIdle time.Duration
}

// DefaultUnauthenticatedIdle is ConnLimits.UnauthenticatedIdle's
// default: long enough for a client that is about to send its token,
// short enough that idling costs an anonymous client a reconnect.
const DefaultUnauthenticatedIdle = 5 * time.Second

// Conns is a listener that holds an HTTP server's connections within
// ConnLimits. Call Install on the server before it serves from it.
//
// A connection counts as authenticated once a request on it has passed
// RequireAny (with no tokens configured, once a request reached a handler
// behind it). Until then it gets no keep-alive after a 401 or 403, a
// short idle timeout, and it may be evicted: when a new connection finds
// the pool (or its peer's share) full, the unauthenticated connection
// that has been idle the longest is closed to make room. Only when none
// is idle is the new one refused: 503 when the server is full, 429 when
// its peer is; a GET of /healthz or /readyz is answered even then.
//
// Conns is safe for concurrent use.
type Conns struct {
	net.Listener
	lim    ConnLimits
	health http.Handler // set by Install: answers health checks beyond the limits

	mu    sync.Mutex
	open  int
	peers map[string]int
	conns map[*conn]struct{}
	seq   uint64 // orders idle connections: the lowest was idle first

	refusing atomic.Int64 // refusals being written
}

// LimitConns wraps ln so that the connections it accepts stay within lim.
func LimitConns(ln net.Listener, lim ConnLimits) *Conns {
	if lim.UnauthenticatedIdle <= 0 {
		lim.UnauthenticatedIdle = DefaultUnauthenticatedIdle
	}
	return &Conns{Listener: ln, lim: lim, peers: map[string]int{}, conns: map[*conn]struct{}{}}
}

// Install ties l to hs, which must serve from l: it learns each
// connection's state from hs (ConnState, ConnContext, and a wrapper
// around hs.Handler), and answers health checks beyond the limits with
// hs.Handler as it was. Hooks hs already has keep running. Call it once,
// before hs serves.
func (l *Conns) Install(hs *http.Server) {
	l.health = hs.Handler
	hs.Handler = l.track(hs.Handler)
	prevState, prevCtx := hs.ConnState, hs.ConnContext
	hs.ConnState = func(c net.Conn, s http.ConnState) {
		if tc, ok := c.(*conn); ok {
			l.state(tc, s)
		}
		if prevState != nil {
			prevState(c, s)
		}
	}
	hs.ConnContext = func(ctx context.Context, c net.Conn) context.Context {
		if prevCtx != nil {
			ctx = prevCtx(ctx, c)
		}
		if tc, ok := c.(*conn); ok {
			ctx = context.WithValue(ctx, connKey{}, tc)
		}
		return ctx
	}
}

// Accept returns the next connection within the limits; those beyond
// them are answered and closed in the background.
func (l *Conns) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		tc, victim, over := l.admit(c)
		if victim != nil {
			_ = victim.Conn.Close() // its slot is already the new one's
		}
		if tc != nil {
			return tc, nil
		}
		l.refuseLater(c, over)
	}
}

// admit takes a slot for c, evicting an idle unauthenticated connection
// when c's peer or the server is full. over says which limit refused it.
func (l *Conns) admit(c net.Conn) (tc, victim *conn, over connLimit) {
	peer := peerOf(c.RemoteAddr())
	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case l.lim.PerPeer > 0 && l.peers[peer] >= l.lim.PerPeer:
		if victim = l.oldestIdleLocked(peer); victim == nil {
			return nil, nil, overPeer
		}
	case l.lim.Max > 0 && l.open >= l.lim.Max:
		if victim = l.oldestIdleLocked(""); victim == nil {
			return nil, nil, overMax
		}
	}
	if victim != nil {
		l.removeLocked(victim)
	}
	tc = &conn{Conn: c, l: l, peer: peer, since: l.nextLocked()}
	l.open++
	l.peers[peer]++
	l.conns[tc] = struct{}{}
	return tc, victim, 0
}

// oldestIdleLocked is the unauthenticated connection, of peer (or of any
// peer when peer is ""), that has waited longest without a request in a
// handler; nil if there is none.
func (l *Conns) oldestIdleLocked(peer string) *conn {
	var best *conn
	for c := range l.conns {
		if c.busy || c.authed.Load() || (peer != "" && c.peer != peer) {
			continue
		}
		if best == nil || c.since < best.since {
			best = c
		}
	}
	return best
}

func (l *Conns) removeLocked(c *conn) {
	if c.gone {
		return
	}
	c.gone = true
	delete(l.conns, c)
	l.open--
	if l.peers[c.peer]--; l.peers[c.peer] <= 0 {
		delete(l.peers, c.peer)
	}
}

func (l *Conns) nextLocked() uint64 {
	l.seq++
	return l.seq
}

// state follows net/http's view of a connection: active while it reads
// and serves a request, idle between requests.
func (l *Conns) state(c *conn, s http.ConnState) {
	switch s {
	case http.StateActive:
		l.setBusy(c, true)
	case http.StateIdle:
		l.setBusy(c, false)
		// net/http sets the idle read deadline right after this hook.
		c.idleNext.Store(true)
	case http.StateClosed:
		l.mu.Lock()
		l.removeLocked(c)
		l.mu.Unlock()
	}
}

func (l *Conns) setBusy(c *conn, busy bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if c.busy && !busy {
		c.since = l.nextLocked()
	}
	c.busy = busy
}

// track marks a connection busy while a handler runs, and evictable
// again once it returns: an unauthenticated connection whose answer is
// written but whose client drains it slowly (or sends a body slowly
// after it) holds nothing a new client needs more.
func (l *Conns) track(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, _ := r.Context().Value(connKey{}).(*conn)
		if c != nil {
			l.setBusy(c, true)
			defer l.setBusy(c, false)
		}
		h.ServeHTTP(w, r)
	})
}

// peerOf is the peer an address belongs to (see ConnLimits.PerPeer).
func peerOf(a net.Addr) string {
	var ip netip.Addr
	switch a := a.(type) {
	case *net.TCPAddr:
		ip = a.AddrPort().Addr()
	default:
		ap, err := netip.ParseAddrPort(a.String())
		if err != nil {
			return a.String()
		}
		ip = ap.Addr()
	}
	ip = ip.Unmap().WithZone("")
	if ip.Is6() {
		p, _ := ip.Prefix(64)
		return p.String()
	}
	return ip.String()
}

// connKey carries a request's *conn in its context (Install's
// ConnContext).
type connKey struct{}

// conn is one admitted connection. Its slot is given back once, by Close,
// by net/http's StateClosed, or by eviction.
type conn struct {
	net.Conn
	l    *Conns
	peer string

	authed   atomic.Bool
	idleNext atomic.Bool // the next read deadline net/http sets is the idle timeout

	// Guarded by l.mu.
	gone  bool
	busy  bool
	since uint64
}

func (c *conn) Close() error {
	c.l.mu.Lock()
	c.l.removeLocked(c)
	c.l.mu.Unlock()
	return c.Conn.Close()
}

// SetReadDeadline shortens the keep-alive idle timeout of a connection
// that has not authenticated: net/http sets it right after the
// connection turns idle (see state), and has no per-connection setting.
func (c *conn) SetReadDeadline(t time.Time) error {
	if c.idleNext.Swap(false) && !c.authed.Load() {
		if short := time.Now().Add(c.l.lim.UnauthenticatedIdle); t.IsZero() || short.Before(t) {
			t = short
		}
	}
	return c.Conn.SetReadDeadline(t)
}

// CloseWrite keeps net/http's half-close (which lets a client read an
// error answer before the connection goes) working through the wrapper.
func (c *conn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}

// markAuthenticated records that a request on ctx's connection has been
// authenticated: the connection keeps the server's idle timeout and is
// never evicted. Without Install (no *conn in ctx) it does nothing.
func markAuthenticated(ctx context.Context) {
	if c, ok := ctx.Value(connKey{}).(*conn); ok {
		c.authed.Store(true)
	}
}

// closeUnlessAuthenticated asks net/http to close the connection after
// this answer (a refusal) unless a request on it has authenticated
// before: an anonymous client that was refused holds no slot by idling.
func closeUnlessAuthenticated(w http.ResponseWriter, r *http.Request) {
	if c, ok := r.Context().Value(connKey{}).(*conn); ok && c.authed.Load() {
		return
	}
	w.Header().Set("Connection", "close")
}
