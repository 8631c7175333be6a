package transport_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/toolhost/toolhost/transport"
)

// rawSession speaks Streamable HTTP by hand, so that the test decides
// what the client does with its streams (the SDK client closes a
// cancelled call's stream; other clients keep it open).
type rawSession struct {
	t   *testing.T
	url string
	sid string
}

func (s *rawSession) post(body string) *http.Response {
	s.t.Helper()
	req, err := http.NewRequest(http.MethodPost, s.url, strings.NewReader(body))
	if err != nil {
		s.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2025-11-25")
	if s.sid != "" {
		req.Header.Set("Mcp-Session-Id", s.sid)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		s.t.Fatal(err)
	}
	return resp
}

func (s *rawSession) body(resp *http.Response) string {
	s.t.Helper()
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		s.t.Fatal(err)
	}
	return string(b)
}

func openRawSession(t *testing.T, url string) *rawSession {
	s := &rawSession{t: t, url: url}
	resp := s.post(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
	s.sid = resp.Header.Get("Mcp-Session-Id")
	s.body(resp)
	s.body(s.post(`{"jsonrpc":"2.0","method":"notifications/initialized"}`))
	return s
}

// Issue 9.7 over HTTP: a client that sends notifications/cancelled and
// keeps the call's stream open receives no response on it; a call that
// is not cancelled still gets its response.
func TestCancelOverHTTPSendsNoResponse(t *testing.T) {
	r := newCancelRig(t, transport.Options{})
	hs := httptest.NewServer(r.srv.HTTPHandler())
	defer hs.Close()
	s := openRawSession(t, hs.URL)

	calls := make(chan *http.Response, 1)
	go func() {
		calls <- s.post(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"gate","arguments":{}}}`)
	}()
	<-r.g.entered
	s.body(s.post(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7,"reason":"user"}}`))
	<-r.g.exited
	if got := s.body(<-calls); strings.Contains(got, `"id":7`) {
		t.Errorf("the cancelled call's stream carried %q; want no response", got)
	}
	wantCancelled(t, r.logs.next(t, "call"), 1)

	go func() {
		calls <- s.post(`{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"gate","arguments":{}}}`)
	}()
	<-r.g.entered
	r.g.release <- struct{}{}
	if got := s.body(<-calls); !strings.Contains(got, `"id":8`) || !strings.Contains(got, `released`) {
		t.Errorf("an uncancelled call's stream carried %q; want its response", got)
	}
}

// The filter reads each body before the SDK; a body over the limit must
// still reach the SDK whole, to be refused there as before.
func TestCancelFilterLeavesLargeBodiesToSDK(t *testing.T) {
	r := newCancelRig(t, transport.Options{MaxBodyBytes: 400})
	hs := httptest.NewServer(r.srv.HTTPHandler())
	defer hs.Close()
	s := openRawSession(t, hs.URL)
	resp := s.post(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"gate","arguments":{"pad":"` + strings.Repeat("x", 500) + `"}}}`)
	s.body(resp)
	if resp.StatusCode != http.StatusRequestEntityTooLarge {
		t.Errorf("a %d-byte body got HTTP %d, want 413", 500, resp.StatusCode)
	}
}
