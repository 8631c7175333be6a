package main

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestE2EAnonymousClientsCannotHoldConnections is issue 27 item 1 against
// a real serve: anonymous clients fill every connection slot (on main, 401
// answers kept their connections alive for the whole idle timeout, and
// everyone else got 503, /healthz included), then a request with a valid
// token and /healthz must both be served.
func TestE2EAnonymousClientsCannotHoldConnections(t *testing.T) {
	const slots = 8
	srv := startServer(t, t.TempDir(), "--token-file", tokenFile(t), "--max-conns", fmt.Sprint(slots),
		"--idle-timeout", "10m") // what the attacker holds must not simply time out
	addr := strings.TrimPrefix(strings.TrimSuffix(srv.url, "/mcp"), "http://")
	initialize := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"conns","version":"1"}}}`
	served := func(t *testing.T) {
		t.Helper()
		c := dialFrom(t, addr, "")
		if status, body := c.send("POST", "/mcp", aliceToken, initialize); status != http.StatusOK {
			t.Fatalf("initialize with a valid token, the slots held anonymously: HTTP %d %q", status, body)
		}
		if status, body := dialFrom(t, addr, "").send("GET", "/healthz", "", ""); status != http.StatusOK {
			t.Fatalf("/healthz, the slots held anonymously: HTTP %d %q", status, body)
		}
	}

	t.Run("401 then keep-alive", func(t *testing.T) {
		// The reported attack: one request each, read the 401, idle.
		for range slots {
			c := dialFrom(t, addr, "")
			if status, _ := c.send("POST", "/mcp", "", initialize); status != http.StatusUnauthorized {
				t.Fatalf("no token: HTTP %d; want 401", status)
			}
		}
		served(t)
	})

	t.Run("idle and silent connections from many addresses", func(t *testing.T) {
		// No 401 to close them: half idle after /healthz, half send
		// nothing, each from its own loopback address (so no per-peer
		// share stops them), and they fill the server.
		for i := range slots {
			c := dialFrom(t, addr, fmt.Sprintf("127.0.0.%d", 2+i))
			if i%2 == 0 {
				c.send("GET", "/healthz", "", "")
			}
		}
		served(t)
	})
}

// e2eConn is one raw HTTP/1.1 client connection.
type e2eConn struct {
	t *testing.T
	net.Conn
	r *bufio.Reader
}

// dialFrom connects to addr from a chosen loopback address ("": any).
func dialFrom(t *testing.T, addr, from string) *e2eConn {
	t.Helper()
	d := net.Dialer{}
	if from != "" {
		d.LocalAddr = &net.TCPAddr{IP: net.ParseIP(from)}
	}
	c, err := d.Dial("tcp", addr)
	if err != nil {
		t.Skipf("dialling from %s: %v (this test needs the whole of 127.0.0.0/8 on loopback, as Linux has)", from, err)
	}
	t.Cleanup(func() { c.Close() })
	// Bounds a hang (a server that never answers); not a timing check.
	c.SetDeadline(time.Now().Add(time.Minute))
	return &e2eConn{t: t, Conn: c, r: bufio.NewReader(c)}
}

// send writes one request (token "" sends none; body "" is a bodiless
// request) and reads the answer's status and body.
func (c *e2eConn) send(method, path, token, body string) (int, string) {
	c.t.Helper()
	var head strings.Builder
	fmt.Fprintf(&head, "%s %s HTTP/1.1\r\nHost: %s\r\n", method, path, c.RemoteAddr())
	if token != "" {
		fmt.Fprintf(&head, "Authorization: Bearer %s\r\n", token)
	}
	if body != "" {
		fmt.Fprintf(&head, "Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: %d\r\n", len(body))
	}
	if _, err := io.WriteString(c, head.String()+"\r\n"+body); err != nil {
		c.t.Fatalf("%s %s: %v", method, path, err)
	}
	resp, err := http.ReadResponse(c.r, nil)
	if err != nil {
		c.t.Fatalf("%s %s: no answer: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	return resp.StatusCode, string(b)
}
