package events_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/toolhost/toolhost/events"
)

// stream is one GET of the events handler, read line by line.
type stream struct {
	t    *testing.T
	resp *http.Response
	r    *bufio.Reader
}

// open GETs the handler and returns once the handler has subscribed (it
// writes its ": toolhost events" comment after subscribing).
func open(t *testing.T, ctx context.Context, url string) *stream {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %s", resp.Status)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Errorf("Content-Type %q", ct)
	}
	if cc := resp.Header.Get("Cache-Control"); cc != "no-cache" {
		t.Errorf("Cache-Control %q", cc)
	}
	s := &stream{t: t, resp: resp, r: bufio.NewReader(resp.Body)}
	if line := s.line(); line != ": toolhost events" {
		t.Fatalf("first line %q", line)
	}
	if line := s.line(); line != "" {
		t.Fatalf("comment not followed by a blank line: %q", line)
	}
	return s
}

func (s *stream) line() string {
	s.t.Helper()
	l, err := s.r.ReadString('\n')
	if err != nil {
		s.t.Fatalf("reading the stream: %v (partial %q)", err, l)
	}
	return strings.TrimSuffix(l, "\n")
}

// next reads one `data:` message and decodes its event.
func (s *stream) next() events.Event {
	s.t.Helper()
	l := s.line()
	data, ok := strings.CutPrefix(l, "data: ")
	if !ok {
		s.t.Fatalf("line %q is not a data line", l)
	}
	if blank := s.line(); blank != "" {
		s.t.Fatalf("message not ended by a blank line: %q", blank)
	}
	var e events.Event
	if err := json.Unmarshal([]byte(data), &e); err != nil {
		s.t.Fatalf("data %q: %v", data, err)
	}
	return e
}

func TestHandlerStreamsEvents(t *testing.T) {
	bus := events.NewBus(nil)
	srv := httptest.NewServer(bus.Handler(events.HandlerOptions{}))
	t.Cleanup(srv.Close) // after the body closes: Close waits for the handler
	s := open(t, t.Context(), srv.URL)

	bus.Publish("dispatch.attempt", map[string]any{"tool": "text.count", "attempt": 1})
	bus.Publish("plan.diff", []string{"a"})
	e1, e2 := s.next(), s.next()
	if e1.Seq != 1 || e1.Type != "dispatch.attempt" || e1.Time.IsZero() {
		t.Errorf("first event %+v", e1)
	}
	if d, _ := e1.Data.(map[string]any); d["tool"] != "text.count" || d["attempt"] != 1.0 {
		t.Errorf("first event data %#v", e1.Data)
	}
	if e2.Seq != 2 || e2.Type != "plan.diff" {
		t.Errorf("second event %+v", e2)
	}
}

func TestHandlerTypeFilter(t *testing.T) {
	tests := []struct {
		name  string
		query string
		want  []string
	}{
		{"comma separated", "?type=dispatch.retry,plan.", []string{"dispatch.retry", "plan.diff"}},
		{"repeated", "?type=dispatch.retry&type=plan.", []string{"dispatch.retry", "plan.diff"}},
		{"spaces and empties", "?type=%20breaker.%20,,&type=", []string{"breaker.state"}},
		{"prefix", "?type=dispatch", []string{"dispatch.attempt", "dispatch.retry"}},
		{"no filter", "", []string{"dispatch.attempt", "dispatch.retry", "breaker.state", "plan.diff"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			bus := events.NewBus(nil)
			srv := httptest.NewServer(bus.Handler(events.HandlerOptions{}))
			t.Cleanup(srv.Close)
			s := open(t, t.Context(), srv.URL+tt.query)
			for _, typ := range []string{"dispatch.attempt", "dispatch.retry", "breaker.state", "plan.diff"} {
				bus.Publish(typ, nil)
			}
			// Ending the stream marks the end of what the filter let through.
			bus.CloseSubscribers()
			var got []string
			for {
				l, err := s.r.ReadString('\n')
				if err == io.EOF {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
				if data, ok := strings.CutPrefix(strings.TrimSuffix(l, "\n"), "data: "); ok {
					var e events.Event
					if err := json.Unmarshal([]byte(data), &e); err != nil {
						t.Fatal(err)
					}
					got = append(got, e.Type)
				}
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

// CloseSubscribers ends the stream: the handler returns and the body ends,
// so an http.Server can shut down.
func TestHandlerReturnsOnCloseSubscribers(t *testing.T) {
	bus := events.NewBus(nil)
	returned := make(chan struct{})
	h := bus.Handler(events.HandlerOptions{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer close(returned)
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	s := open(t, t.Context(), srv.URL)
	bus.CloseSubscribers()
	<-returned
	if rest, err := io.ReadAll(s.r); err != nil || len(rest) != 0 {
		t.Errorf("after CloseSubscribers: %q, %v", rest, err)
	}
	if bus.Enabled() {
		t.Error("the handler's subscription is still counted")
	}
}

// A client that goes away ends the handler and its subscription.
func TestHandlerReturnsWhenClientLeaves(t *testing.T) {
	bus := events.NewBus(nil)
	returned := make(chan struct{})
	h := bus.Handler(events.HandlerOptions{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer close(returned)
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	ctx, cancel := context.WithCancel(t.Context())
	open(t, ctx, srv.URL)
	if !bus.Enabled() {
		t.Fatal("no subscription while streaming")
	}
	cancel()
	<-returned
	if bus.Enabled() {
		t.Error("the subscription outlived the request")
	}
}

// noFlush is a ResponseWriter that cannot stream.
type noFlush struct{ http.ResponseWriter }

func TestHandlerNeedsFlusher(t *testing.T) {
	bus := events.NewBus(nil)
	rec := httptest.NewRecorder()
	bus.Handler(events.HandlerOptions{}).ServeHTTP(noFlush{rec}, httptest.NewRequest(http.MethodGet, "/events", nil))
	if rec.Code != http.StatusInternalServerError {
		t.Errorf("status %d, want 500", rec.Code)
	}
	if bus.Enabled() {
		t.Error("subscribed without streaming")
	}
}

func TestHandlerReturnsOnCloseStreams(t *testing.T) {
	bus := events.NewBus(nil)
	inproc := bus.Subscribe(4)
	defer inproc.Close()
	srv := httptest.NewServer(bus.Handler(events.HandlerOptions{}))
	defer srv.Close()
	resp, err := http.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	br := bufio.NewReader(resp.Body)
	if line, _ := br.ReadString('\n'); !strings.HasPrefix(line, ": toolhost events") {
		t.Fatalf("first line %q", line)
	}
	bus.CloseStreams()
	bus.CloseStreams() // idempotent
	if _, err := io.ReadAll(br); err != nil {
		t.Fatalf("stream did not end cleanly: %v", err)
	}
	// In-process subscribers keep receiving.
	bus.Publish("x.y", 1)
	if e := <-inproc.C; e.Type != "x.y" {
		t.Fatalf("in-process subscriber got %+v", e)
	}
}
