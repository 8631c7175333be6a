package transport

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"
)

// connLimit names the limit a connection was refused by.
type connLimit int

const (
	overMax  connLimit = iota + 1 // ConnLimits.Max
	overPeer                      // ConnLimits.PerPeer
)

// maxRefusing bounds the goroutines answering refused connections: under
// a flood they are closed without a word.
const maxRefusing = 64

// refuseWait bounds how long a refused connection may take to send its
// request, and then to read the answer.
const refuseWait = 2 * time.Second

// maxHealthAnswer bounds what a health handler may write beyond the
// limits.
const maxHealthAnswer = 64 << 10

func (l *Conns) refuseLater(c net.Conn, over connLimit) {
	if l.refusing.Add(1) > maxRefusing {
		l.refusing.Add(-1)
		_ = c.Close()
		return
	}
	go func() {
		defer l.refusing.Add(-1)
		l.refuse(c, over)
	}()
}

// refuse reads the request a refused connection sends and answers it
// once, then closes: a health check gets the health handler's answer
// (orchestrators restart a server whose /healthz goes unanswered, and a
// full server is not a dead one), anything else 503 or 429. It then
// reads what the client sent (briefly) before closing, so that the
// client reads the answer rather than a connection reset.
func (l *Conns) refuse(c net.Conn, over connLimit) {
	defer c.Close()
	_ = c.SetReadDeadline(time.Now().Add(refuseWait))
	req, err := http.ReadRequest(bufio.NewReader(io.LimitReader(c, 64<<10)))
	var resp *http.Response
	if err == nil && l.health != nil && isHealthCheck(req) {
		resp = l.answerHealth(c, req)
	} else {
		resp = l.overLimitAnswer(over)
	}
	resp.Close = true
	_ = c.SetWriteDeadline(time.Now().Add(refuseWait))
	if err := resp.Write(c); err != nil {
		return
	}
	if cw, ok := c.(interface{ CloseWrite() error }); ok {
		_ = cw.CloseWrite()
	}
	_ = c.SetReadDeadline(time.Now().Add(refuseWait))
	_, _ = io.CopyN(io.Discard, c, 64<<10)
}

// isHealthCheck: a GET or HEAD of /healthz or /readyz.
func isHealthCheck(r *http.Request) bool {
	return (r.Method == http.MethodGet || r.Method == http.MethodHead) &&
		(r.URL.Path == "/healthz" || r.URL.Path == "/readyz")
}

// overLimitAnswer is the answer to a connection beyond a limit.
func (l *Conns) overLimitAnswer(over connLimit) *http.Response {
	status, msg := http.StatusServiceUnavailable, "this server is at its connection limit (serve --max-conns); try again shortly"
	if over == overPeer {
		status = http.StatusTooManyRequests
		msg = fmt.Sprintf("this client address already holds %d connections, this server's limit per peer (serve --max-conns-per-peer); reuse or close one", l.lim.PerPeer)
	}
	var body bytes.Buffer
	rec := &recorder{header: http.Header{}, body: &body}
	writeRPCError(rec, status, -32603, msg)
	rec.header.Set("Retry-After", "1")
	return rec.response(nil)
}

// answerHealth runs the health handler for req in the connLimit's
// goroutine, under refuseWait.
func (l *Conns) answerHealth(c net.Conn, req *http.Request) (resp *http.Response) {
	ctx, cancel := context.WithTimeout(context.Background(), refuseWait)
	defer cancel()
	ctx = context.WithValue(ctx, http.LocalAddrContextKey, c.LocalAddr())
	req = req.WithContext(ctx)
	req.RemoteAddr = c.RemoteAddr().String()
	rec := &recorder{header: http.Header{}, body: &bytes.Buffer{}}
	defer func() {
		if recover() != nil { // as net/http does: a panicking handler ends its request only
			resp = l.overLimitAnswer(overMax)
		}
	}()
	l.health.ServeHTTP(rec, req)
	return rec.response(req)
}

// recorder is the http.ResponseWriter of an answer written beyond the
// limits, kept whole (up to maxHealthAnswer) and written at once.
type recorder struct {
	header http.Header
	status int
	body   *bytes.Buffer
}

func (r *recorder) Header() http.Header { return r.header }

func (r *recorder) WriteHeader(status int) {
	if r.status == 0 {
		r.status = status
	}
}

func (r *recorder) Write(p []byte) (int, error) {
	r.WriteHeader(http.StatusOK)
	if r.body.Len()+len(p) > maxHealthAnswer {
		return 0, fmt.Errorf("an answer beyond the connection limits is at most %d bytes", maxHealthAnswer)
	}
	return r.body.Write(p)
}

func (r *recorder) response(req *http.Request) *http.Response {
	r.WriteHeader(http.StatusOK)
	return &http.Response{
		StatusCode: r.status, ProtoMajor: 1, ProtoMinor: 1,
		Header: r.header, Body: io.NopCloser(r.body), ContentLength: int64(r.body.Len()),
		Request: req,
	}
}
