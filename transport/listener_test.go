package transport_test

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/toolhost/toolhost/transport"
)

// connServer is a real http.Server on loopback behind transport.Conns:
// /mcp behind alice's token (and /slow, which blocks until release is
// closed), /healthz open, as serve mounts them.
type connServer struct {
	addr    string
	release chan struct{}
	entered chan struct{}
}

func startConnServer(t *testing.T, lim transport.ConnLimits) *connServer {
	t.Helper()
	tokens, err := transport.ParseTokens("test", strings.NewReader("alice:"+aliceToken+"\n"))
	if err != nil {
		t.Fatal(err)
	}
	s := &connServer{release: make(chan struct{}), entered: make(chan struct{}, 8)}
	mux := http.NewServeMux()
	mux.Handle("/mcp", tokens.Require(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "called") })))
	mux.HandleFunc("/slow", func(w http.ResponseWriter, _ *http.Request) {
		s.entered <- struct{}{}
		<-s.release
	})
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "ok\n") })
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	origins, err := transport.ParseOrigins(nil)
	if err != nil {
		t.Fatal(err)
	}
	hs := &http.Server{Handler: origins.Guard(mux), IdleTimeout: time.Hour, ReadHeaderTimeout: time.Hour}
	conns := transport.LimitConns(ln, lim)
	conns.Install(hs)
	go hs.Serve(conns)
	t.Cleanup(func() {
		select {
		case <-s.release:
		default:
			close(s.release)
		}
		hs.Close()
	})
	s.addr = ln.Addr().String()
	return s
}

// rawConn is one client connection from a chosen loopback address ("" is
// the system's choice).
type rawConn struct {
	t *testing.T
	net.Conn
	r *bufio.Reader
}

func (s *connServer) dial(t *testing.T, from string) *rawConn {
	t.Helper()
	d := net.Dialer{}
	if from != "" {
		d.LocalAddr = &net.TCPAddr{IP: net.ParseIP(from)}
	}
	c, err := d.Dial("tcp", s.addr)
	if err != nil {
		t.Skipf("dialling from %s: %v (this test needs the whole of 127.0.0.0/8 on loopback, as Linux has)", from, err)
	}
	t.Cleanup(func() { c.Close() })
	// Bounds a hang (a server that never answers); not a timing check.
	c.SetDeadline(time.Now().Add(time.Minute))
	return &rawConn{t: t, Conn: c, r: bufio.NewReader(c)}
}

// do sends one request and reads its answer; token "" sends none.
func (c *rawConn) do(method, path, token string) (*http.Response, string) {
	c.t.Helper()
	auth := ""
	if token != "" {
		auth = "Authorization: Bearer " + token + "\r\n"
	}
	if _, err := fmt.Fprintf(c, "%s %s HTTP/1.1\r\nHost: 127.0.0.1\r\n%s\r\n", method, path, auth); err != nil {
		c.t.Fatalf("%s %s: %v", method, path, err)
	}
	resp, err := http.ReadResponse(c.r, nil)
	if err != nil {
		c.t.Fatalf("%s %s: no answer: %v", method, path, err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	return resp, string(b)
}

// closed reports whether the server has closed the connection: it waits
// for the connection's end (within its deadline) and fails if anything
// else arrives.
func (c *rawConn) closed() bool {
	c.t.Helper()
	_, err := c.r.ReadByte()
	return err == io.EOF || (err != nil && strings.Contains(err.Error(), "reset"))
}

func TestConnsRefuseBeyondMaxButAnswerHealth(t *testing.T) {
	s := startConnServer(t, transport.ConnLimits{Max: 2})
	for range 2 { // authenticated: held, never evicted
		if resp, body := s.dial(t, "").do("GET", "/mcp", aliceToken); resp.StatusCode != 200 {
			t.Fatalf("within the limit: HTTP %d %q", resp.StatusCode, body)
		}
	}
	resp, body := s.dial(t, "").do("GET", "/mcp", aliceToken)
	if resp.StatusCode != http.StatusServiceUnavailable || !strings.Contains(body, "--max-conns") || !resp.Close {
		t.Fatalf("third connection: HTTP %d close=%v %q; want 503 naming --max-conns", resp.StatusCode, resp.Close, body)
	}
	resp, body = s.dial(t, "").do("GET", "/healthz", "")
	if resp.StatusCode != 200 || body != "ok\n" || !resp.Close {
		t.Fatalf("/healthz beyond the limit: HTTP %d close=%v %q; want the health handler's 200", resp.StatusCode, resp.Close, body)
	}
	resp, _ = s.dial(t, "").do("HEAD", "/healthz", "")
	if resp.StatusCode != 200 {
		t.Fatalf("HEAD /healthz beyond the limit: HTTP %d", resp.StatusCode)
	}
}

// The regression of issue 27 item 1 at the listener: anonymous
// connections that idle (after /healthz, or having sent nothing yet)
// give way to a new connection when the server is full, the oldest
// first.
func TestConnsEvictIdleUnauthenticated(t *testing.T) {
	s := startConnServer(t, transport.ConnLimits{Max: 3, UnauthenticatedIdle: time.Hour})
	first := s.dial(t, "")
	first.do("GET", "/healthz", "")
	second := s.dial(t, "")
	second.do("GET", "/healthz", "")
	s.dial(t, "") // sends nothing
	for i := range 3 {
		if resp, body := s.dial(t, "").do("GET", "/mcp", aliceToken); resp.StatusCode != 200 {
			t.Fatalf("authenticated connection %d with the server full of idle anonymous ones: HTTP %d %q", i, resp.StatusCode, body)
		}
	}
	if !first.closed() || !second.closed() {
		t.Fatal("the idle anonymous connections were not the ones closed")
	}
}

// An anonymous connection in a handler is not evicted; one that has
// authenticated never is.
func TestConnsKeepBusyAndAuthenticated(t *testing.T) {
	s := startConnServer(t, transport.ConnLimits{Max: 2, UnauthenticatedIdle: time.Hour})
	authed := s.dial(t, "")
	authed.do("GET", "/mcp", aliceToken)
	busy := s.dial(t, "")
	fmt.Fprintf(busy, "GET /slow HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
	<-s.entered
	if resp, body := s.dial(t, "").do("GET", "/mcp", aliceToken); resp.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("a third connection while one is authenticated and one busy: HTTP %d %q; want 503", resp.StatusCode, body)
	}
	close(s.release)
	if resp, err := http.ReadResponse(busy.r, nil); err != nil || resp.StatusCode != 200 {
		t.Fatalf("the busy request was cut: %v %v", resp, err)
	}
	if resp, body := authed.do("GET", "/mcp", aliceToken); resp.StatusCode != 200 {
		t.Fatalf("the authenticated connection: HTTP %d %q", resp.StatusCode, body)
	}
}

// A refusal closes a connection that has not authenticated; one that has
// keeps its keep-alive.
func TestConnsRefusalClosesUnauthenticated(t *testing.T) {
	s := startConnServer(t, transport.ConnLimits{})
	for _, token := range []string{"", "wrong-token-0123456789"} {
		c := s.dial(t, "")
		resp, _ := c.do("GET", "/mcp", token)
		if resp.StatusCode != http.StatusUnauthorized || !resp.Close || !c.closed() {
			t.Fatalf("token %q: HTTP %d close=%v; want 401 and the connection closed", token, resp.StatusCode, resp.Close)
		}
	}
	// A refused origin: 403, closed likewise.
	c := s.dial(t, "")
	fmt.Fprintf(c, "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nOrigin: http://evil.example\r\n\r\n")
	resp, err := http.ReadResponse(c.r, nil)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	if resp.StatusCode != http.StatusForbidden || !resp.Close || !c.closed() {
		t.Fatalf("a foreign origin: HTTP %d close=%v; want 403 and the connection closed", resp.StatusCode, resp.Close)
	}
	c = s.dial(t, "")
	c.do("GET", "/mcp", aliceToken)
	resp, _ = c.do("GET", "/mcp", "wrong-token-0123456789")
	if resp.StatusCode != http.StatusUnauthorized || resp.Close {
		t.Fatalf("a wrong token on an authenticated connection: HTTP %d close=%v; want 401, kept alive", resp.StatusCode, resp.Close)
	}
	if resp, _ := c.do("GET", "/mcp", aliceToken); resp.StatusCode != 200 {
		t.Fatalf("the same connection after: HTTP %d", resp.StatusCode)
	}
}

// Until it authenticates, a connection gets a short idle timeout; then
// the server's own.
func TestConnsShortIdleUntilAuthenticated(t *testing.T) {
	s := startConnServer(t, transport.ConnLimits{UnauthenticatedIdle: 50 * time.Millisecond})
	anon, authed := s.dial(t, ""), s.dial(t, "")
	anon.do("GET", "/healthz", "")
	authed.do("GET", "/healthz", "")
	authed.do("GET", "/mcp", aliceToken)
	if !anon.closed() {
		t.Fatal("an idle anonymous connection was not closed")
	}
	// authed was idle as long as anon and more (the server's idle
	// timeout is an hour): it must still serve.
	if resp, _ := authed.do("GET", "/mcp", aliceToken); resp.StatusCode != 200 {
		t.Fatalf("the authenticated connection after anon's idle timeout: HTTP %d", resp.StatusCode)
	}
}

// One peer (one address) holds at most PerPeer connections; others are
// not refused by its share.
func TestConnsPerPeer(t *testing.T) {
	s := startConnServer(t, transport.ConnLimits{Max: 10, PerPeer: 2, UnauthenticatedIdle: time.Hour})
	for range 2 {
		s.dial(t, "127.0.0.2").do("GET", "/mcp", aliceToken)
	}
	resp, body := s.dial(t, "127.0.0.2").do("GET", "/mcp", aliceToken)
	if resp.StatusCode != http.StatusTooManyRequests || !strings.Contains(body, "--max-conns-per-peer") {
		t.Fatalf("a third connection from one address with PerPeer 2: HTTP %d %q; want 429", resp.StatusCode, body)
	}
	if resp, _ := s.dial(t, "127.0.0.2").do("GET", "/healthz", ""); resp.StatusCode != 200 {
		t.Fatalf("/healthz beyond the peer's share: HTTP %d", resp.StatusCode)
	}
	if resp, body := s.dial(t, "127.0.0.3").do("GET", "/mcp", aliceToken); resp.StatusCode != 200 {
		t.Fatalf("another address: HTTP %d %q", resp.StatusCode, body)
	}
	// A peer at its share evicts its own idle anonymous connection, not
	// another peer's.
	other := s.dial(t, "127.0.0.4")
	other.do("GET", "/healthz", "")
	idle := s.dial(t, "127.0.0.3")
	idle.do("GET", "/healthz", "")
	if resp, body := s.dial(t, "127.0.0.3").do("GET", "/mcp", aliceToken); resp.StatusCode != 200 {
		t.Fatalf("a peer at its share with an idle anonymous connection: HTTP %d %q", resp.StatusCode, body)
	}
	if !idle.closed() {
		t.Fatal("the peer's idle anonymous connection was not the one closed")
	}
	if resp, _ := other.do("GET", "/healthz", ""); resp.StatusCode != 200 {
		t.Fatalf("another peer's connection was closed: HTTP %d", resp.StatusCode)
	}
}

// Closing a connection gives its slot back: with one slot, held by an
// authenticated connection (never evicted), the next is admitted once the
// first is gone.
func TestConnsReleaseOnClose(t *testing.T) {
	s := startConnServer(t, transport.ConnLimits{Max: 1, UnauthenticatedIdle: time.Hour})
	for i := range 3 {
		deadline := time.Now().Add(time.Minute) // the server notices the close when it reads
		for {
			c := s.dial(t, "")
			resp, _ := c.do("GET", "/mcp", aliceToken)
			if resp.StatusCode == 200 {
				c.Close()
				break
			}
			if resp.StatusCode != http.StatusServiceUnavailable || time.Now().After(deadline) {
				t.Fatalf("connection %d after the one before it closed: HTTP %d", i, resp.StatusCode)
			}
		}
	}
}
