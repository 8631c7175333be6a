package events_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/toolhost/toolhost/events"
)

// secretPayload is a payload with a value to redact.
type secretPayload struct {
	Tool string `json:"tool"`
	Args string `json:"args,omitempty"`
}

func (p secretPayload) Redacted() any { p.Args = ""; return p }

// Regression (issue 10 finding 8): a subscriber scoped to an identity sees
// that identity's events and the server's, never another identity's.
func TestScopedSubscriberSeesOwnCallsOnly(t *testing.T) {
	bus := events.NewBus(nil)
	alice := bus.SubscribeFilter(10, events.Filter{Scoped: true, Caller: "alice"})
	defer alice.Close()
	all := bus.Subscribe(10)
	defer all.Close()
	bus.PublishFor("alice", "dispatch.result", "a")
	bus.PublishFor("bob", "dispatch.result", "b")
	bus.Publish("breaker.state", "server")
	var got []string
	for _, e := range drain(alice) {
		got = append(got, e.Caller+":"+e.Data.(string))
	}
	if want := []string{"alice:a", ":server"}; !slices.Equal(got, want) {
		t.Errorf("alice's subscription got %q, want %q", got, want)
	}
	if n := len(drain(all)); n != 3 {
		t.Errorf("the unscoped subscription got %d events, want 3", n)
	}
}

// Regression (issue 10 finding 8): values leave the bus (subscribers and
// log) only when the bus was created with Values.
func TestValuesRedactedUnlessAsked(t *testing.T) {
	for _, values := range []bool{false, true} {
		t.Run(fmt.Sprint("values=", values), func(t *testing.T) {
			var log bytes.Buffer
			bus := events.New(events.Options{Logger: slog.New(slog.NewJSONHandler(&log, nil)), Values: values})
			sub := bus.Subscribe(1)
			defer sub.Close()
			bus.PublishFor("alice", "step.started", secretPayload{Tool: "sign", Args: "hmac-key"})
			e := (<-sub.C).Data.(secretPayload)
			if got := e.Args == "hmac-key"; got != values {
				t.Errorf("subscriber got %+v", e)
			}
			if got := strings.Contains(log.String(), "hmac-key"); got != values {
				t.Errorf("log %q", log.String())
			}
			if !strings.Contains(log.String(), `"caller":"alice"`) || e.Tool != "sign" {
				t.Errorf("redaction lost the rest: %+v, log %q", e, log.String())
			}
		})
	}
}

// The type index: a subscriber that comes after a type was first published
// is matched against it, one that leaves is no longer delivered to, and
// types past the index's bound are still delivered.
func TestTypeIndexFollowsSubscribers(t *testing.T) {
	bus := events.NewBus(nil)
	first := bus.Subscribe(10)
	bus.Publish("a.x", nil) // indexes a.x with first only
	late := bus.Subscribe(10, "a.")
	other := bus.Subscribe(10, "b.")
	bus.Publish("a.x", nil)
	if got := types(drain(late)); !slices.Equal(got, []string{"a.x"}) {
		t.Errorf("late subscriber got %q", got)
	}
	late.Close()
	bus.Publish("a.x", nil)
	if n := len(drain(first)); n != 3 {
		t.Errorf("first got %d events, want 3", n)
	}
	if n := len(drain(other)); n != 0 {
		t.Errorf("b. subscriber got %d a.x events", n)
	}
	first.Close()
	defer other.Close()
	for i := range 1100 {
		bus.Publish(fmt.Sprintf("b.%d", i), nil)
		if got := drain(other); len(got) != 1 {
			t.Fatalf("type %d: got %d events", i, len(got))
		}
	}
}

// identityHeader is the test's stand-in for bearer authentication.
func identityHeader(r *http.Request) string { return r.Header.Get("X-Identity") }

func get(t *testing.T, ctx context.Context, url, identity string) *http.Response {
	t.Helper()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	req.Header.Set("X-Identity", identity)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

func wantRefusal(t *testing.T, resp *http.Response, status int, says string) {
	t.Helper()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != status || !strings.Contains(string(body), says) {
		t.Errorf("status %d, body %q; want %d saying %q", resp.StatusCode, body, status, says)
	}
}

// Regression (issue 10 finding 10): streams are bounded per identity and in
// total, prefixes per stream and in length; refusals say which bound, and
// a stream that ends gives its slot back.
func TestHandlerLimits(t *testing.T) {
	bus := events.NewBus(nil)
	h := bus.Handler(events.HandlerOptions{Identity: identityHeader, MaxStreams: 3, MaxStreamsPerIdentity: 2, MaxPrefixes: 3})
	returned := make(chan int, 16)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := &statusWriter{ResponseWriter: w}
		defer func() { returned <- rec.status }()
		h.ServeHTTP(rec, r)
	}))
	t.Cleanup(srv.Close)
	ctx, cancel := context.WithCancel(t.Context())
	for _, id := range []string{"alice", "alice", "bob"} {
		if resp := get(t, ctx, srv.URL, id); resp.StatusCode != http.StatusOK {
			t.Fatalf("%s: %s", id, resp.Status)
		}
	}
	wantRefusal(t, get(t, t.Context(), srv.URL, "alice"), http.StatusTooManyRequests, `identity "alice" already has 2 event streams open`)
	wantRefusal(t, get(t, t.Context(), srv.URL, "carol"), http.StatusTooManyRequests, "the server already has 3 event streams open")
	for range 2 { // the refusals
		if st := <-returned; st != http.StatusTooManyRequests {
			t.Fatalf("a refusal's handler wrote %d", st)
		}
	}
	cancel() // every stream ends; their slots come back
	for range 3 {
		<-returned
	}
	ok := get(t, t.Context(), srv.URL+"?type=a,b,c,a", "carol") // duplicates count once
	if ok.StatusCode != http.StatusOK {
		t.Errorf("after the streams ended: %s", ok.Status)
	}
	ok.Body.Close()
	wantRefusal(t, get(t, t.Context(), srv.URL+"?type=a,b&type=c,d", "dave"), http.StatusBadRequest, "more than 3 type prefixes")
	wantRefusal(t, get(t, t.Context(), srv.URL+"?type="+strings.Repeat("x", events.MaxPrefixLen+1), "dave"), http.StatusBadRequest, "the limit is 128")
}

// Scoped streams: an identity's stream carries its own calls and the
// server's events; an operator's carries everyone's.
func TestHandlerScopesByIdentity(t *testing.T) {
	bus := events.NewBus(nil)
	srv := httptest.NewServer(bus.Handler(events.HandlerOptions{Identity: identityHeader,
		Operator: func(id string) bool { return id == "ops" }}))
	t.Cleanup(srv.Close)
	bob := &stream{t: t, resp: get(t, t.Context(), srv.URL, "bob")}
	ops := &stream{t: t, resp: get(t, t.Context(), srv.URL, "ops")}
	for _, s := range []*stream{bob, ops} {
		s.r = bufio.NewReader(s.resp.Body)
		s.line()
		s.line()
	}
	bus.PublishFor("alice", "dispatch.result", "alice's")
	bus.Publish("breaker.state", "server's")
	bus.PublishFor("bob", "dispatch.result", "bob's")
	if e := bob.next(); e.Caller != "" || e.Data != "server's" {
		t.Errorf("bob's first event %+v, want the server's", e)
	}
	if e := bob.next(); e.Caller != "bob" {
		t.Errorf("bob's second event %+v, want his own", e)
	}
	for _, want := range []string{"alice", "", "bob"} {
		if e := ops.next(); e.Caller != want {
			t.Errorf("operator got %+v, want %q's event", e, want)
		}
	}
}

// statusWriter records the status a handler wrote, and streams.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	w.status = code
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Flush() { w.ResponseWriter.(http.Flusher).Flush() }
