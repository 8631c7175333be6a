package transport

import (
	"io"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// LimitListener accepts at most max connections at once from ln (0 or
// less: no limit). A connection beyond the limit is answered "503 Service
// Unavailable" and closed at once, rather than left waiting in the
// kernel's queue: a client learns why, and /healthz is refused rather
// than hanging. Idle and stalled connections are closed by the server's
// timeouts, which is what frees their slots.
func LimitListener(ln net.Listener, max int) net.Listener {
	if max <= 0 {
		return ln
	}
	return &limitListener{Listener: ln, max: int64(max)}
}

type limitListener struct {
	net.Listener
	max      int64
	open     atomic.Int64
	refusing atomic.Int64 // refusals being written
}

// maxRefusing bounds the goroutines answering refused connections: under
// a flood they are closed without a word.
const maxRefusing = 64

const overLimitHead = "HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\nConnection: close\r\nRetry-After: 1\r\nContent-Length: "

func (l *limitListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		if l.open.Add(1) <= l.max {
			return &limitConn{Conn: c, release: func() { l.open.Add(-1) }}, nil
		}
		l.open.Add(-1)
		if l.refusing.Add(1) > maxRefusing {
			l.refusing.Add(-1)
			_ = c.Close()
			continue
		}
		go func() {
			defer l.refusing.Add(-1)
			refuse(c)
		}()
	}
}

// refuse answers an HTTP request that has not been read yet with 503, then
// reads what the client sent (briefly) before closing, so that the
// client reads the answer rather than a connection reset.
func refuse(c net.Conn) {
	defer c.Close()
	body := `{"jsonrpc":"2.0","id":null,"error":{"code":-32603,"message":"this server is at its connection limit (serve --max-conns); try again shortly"}}` + "\n"
	_ = c.SetDeadline(time.Now().Add(2 * time.Second))
	if _, err := io.WriteString(c, overLimitHead+strconv.Itoa(len(body))+"\r\n\r\n"+body); err != nil {
		return
	}
	if tc, ok := c.(interface{ CloseWrite() error }); ok {
		_ = tc.CloseWrite()
	}
	_, _ = io.CopyN(io.Discard, c, 64<<10)
}

// limitConn gives its slot back once, on the first Close.
type limitConn struct {
	net.Conn
	once    sync.Once
	release func()
}

func (c *limitConn) Close() error {
	c.once.Do(c.release)
	return c.Conn.Close()
}

// CloseWrite keeps net/http's half-close (which lets a client read an
// error answer before the connection goes) working through the wrapper.
func (c *limitConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}
