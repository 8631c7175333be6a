package transport_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolhost/toolhost/dispatcher"
	"github.com/toolhost/toolhost/transport"
)

const (
	aliceToken = "alice-0123456789abcdef"
	bobToken   = "bob-0123456789abcdef00"
)

// serveHTTP serves the fake tools' HTTPHandler behind tokens for alice and
// bob, the way serve mounts /mcp, on a server with the given ReadTimeout.
func serveHTTP(t *testing.T, opts transport.Options, readTimeout time.Duration) *httptest.Server {
	t.Helper()
	h := &harness{fakes: fakes{entered: make(chan struct{}), release: make(chan struct{})}}
	reg := h.registry(t)
	opts.Logger = slog.New(slog.DiscardHandler)
	srv := transport.New(dispatcher.New(reg, dispatcher.Config{}), reg, opts)
	tokens, err := transport.ParseTokens("test", strings.NewReader("alice:"+aliceToken+"\nbob:"+bobToken+"\n"))
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewUnstartedServer(tokens.Require(srv.HTTPHandler()))
	hs.Config.ReadTimeout = readTimeout
	hs.Start()
	t.Cleanup(func() {
		hs.CloseClientConnections()
		hs.Close()
	})
	return hs
}

// bearer adds a token to every request.
type bearer struct{ token string }

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}

func connectAs(t *testing.T, url, token string) (*mcp.ClientSession, error) {
	t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "sessions-test", Version: "0"}, nil)
	cs, err := c.Connect(t.Context(), &mcp.StreamableClientTransport{
		Endpoint: url, HTTPClient: &http.Client{Transport: bearer{token}}, DisableStandaloneSSE: true,
	}, &mcp.ClientSessionOptions{ProtocolVersion: transport.Revision20251125}) // sessions are a 2025 thing
	if err == nil {
		t.Cleanup(func() { cs.Close() })
	}
	return cs, err
}

func TestMaxSessionsPerCaller(t *testing.T) {
	hs := serveHTTP(t, transport.Options{MaxSessions: 10, MaxSessionsPerCaller: 2}, 0)
	var alice []*mcp.ClientSession
	for range 2 {
		cs, err := connectAs(t, hs.URL, aliceToken)
		if err != nil {
			t.Fatal(err)
		}
		alice = append(alice, cs)
	}
	if _, err := connectAs(t, hs.URL, aliceToken); err == nil || !strings.Contains(err.Error(), "Too Many Requests") {
		t.Fatalf("alice's third session: %v; want 429", err)
	}
	// One identity's sessions leave the others' slots alone.
	for range 2 {
		if _, err := connectAs(t, hs.URL, bobToken); err != nil {
			t.Fatalf("bob: %v", err)
		}
	}
	// A closed session gives its slot back.
	if err := alice[0].Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := connectAs(t, hs.URL, aliceToken); err != nil {
		t.Fatalf("alice after closing one: %v", err)
	}
}

// rawPOST sends a session-opening POST over its own connection, with a
// Content-Length of declared but only body written, and returns the
// connection to read the answer from.
func rawPOST(t *testing.T, url, body string, declared int) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", strings.TrimPrefix(url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	req := "POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer " + aliceToken +
		"\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: " +
		itoa(declared) + "\r\n\r\n" + body
	if _, err := io.WriteString(c, req); err != nil {
		t.Fatal(err)
	}
	return c
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

// A client that opens a session and stalls mid-body must not hold its
// slot forever: the server's read timeout (serve --read-timeout) fails the
// read, the request is answered and the slot is free again.
func TestStalledSessionOpeningReleasesItsSlot(t *testing.T) {
	hs := serveHTTP(t, transport.Options{MaxSessions: 1}, 50*time.Millisecond)
	stalled := rawPOST(t, hs.URL, `{"jsonrpc":"2.0","id":1,"method":"initia`, 500)
	// The bound on this read only turns a hang into a failure; the
	// answer comes when the read timeout passes.
	stalled.SetReadDeadline(time.Now().Add(time.Minute))
	resp, err := http.ReadResponse(bufio.NewReader(stalled), nil)
	if err != nil {
		t.Fatalf("the stalled request was never answered: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode < 400 {
		t.Fatalf("stalled body answered HTTP %d", resp.StatusCode)
	}
	if _, err := connectAs(t, hs.URL, aliceToken); err != nil {
		t.Fatalf("the only session slot is still held: %v", err)
	}
}

// The SDK answers an unknown session with a plain-text 404 and another
// identity's session with a plain-text 403; clients get JSON-RPC errors.
func TestSessionErrorsAreJSONRPC(t *testing.T) {
	hs := serveHTTP(t, transport.Options{}, 0)
	cs, err := connectAs(t, hs.URL, aliceToken)
	if err != nil {
		t.Fatal(err)
	}
	post := func(session, token string) (*http.Response, rpcError) {
		t.Helper()
		req, _ := http.NewRequestWithContext(context.Background(), http.MethodPost, hs.URL,
			strings.NewReader(`{"jsonrpc":"2.0","id":5,"method":"tools/list"}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Mcp-Session-Id", session)
		req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var e rpcError
		b, _ := io.ReadAll(resp.Body)
		if err := json.Unmarshal(b, &e); err != nil || string(e.ID) != "null" || resp.Header.Get("Content-Type") != "application/json" {
			t.Fatalf("HTTP %d %q (%s): not a JSON-RPC error", resp.StatusCode, b, resp.Header.Get("Content-Type"))
		}
		return resp, e
	}
	if resp, e := post("no-such-session", aliceToken); resp.StatusCode != 404 || e.Error.Code != transport.CodeSessionNotFound {
		t.Fatalf("unknown session: HTTP %d %+v", resp.StatusCode, e)
	}
	if resp, e := post(cs.ID(), bobToken); resp.StatusCode != 403 || !strings.Contains(e.Error.Message, "mismatch") {
		t.Fatalf("alice's session used by bob: HTTP %d %+v", resp.StatusCode, e)
	}
}
