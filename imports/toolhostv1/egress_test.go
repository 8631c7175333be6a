package toolhostv1_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolhost/toolhost/abi"
	"github.com/toolhost/toolhost/host"
	"github.com/toolhost/toolhost/imports/toolhostv1"
	"github.com/toolhost/toolhost/internal/testkit/testwasm"
)

// Every test here talks to httptest servers on 127.0.0.1 only.

var loopback = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}

// egressModule loads the egress test module in a runtime of its own whose
// grant for it is g (nil: no grant).
func egressModule(t *testing.T, g *toolhostv1.Grant, gov toolhostv1.EgressGovernor) *host.Module {
	t.Helper()
	path := testwasm.Go(t, "./host/testdata/egress")
	eg := toolhostv1.Egress{Governor: gov}
	if g != nil {
		eg.Grants = map[string]toolhostv1.Grant{filepath.Base(path): *g}
	}
	// A cache of this package's own beside the built fixture: compiling
	// the Go fixture takes about 1 s (15 s under -race) per runtime.
	rt, err := host.New(context.Background(), host.Config{Egress: eg, Logger: slog.New(slog.DiscardHandler),
		CacheDir: filepath.Join(filepath.Dir(path), "wazero-cache-toolhostv1")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rt.Close(context.Background()) })
	m, err := rt.LoadFile(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// loopbackGrant grants http to 127.0.0.1 and its addresses.
func loopbackGrant() *toolhostv1.Grant {
	return &toolhostv1.Grant{Hosts: []string{"127.0.0.1"}, Schemes: []string{"http"}, AllowNetworks: loopback}
}

type fetchResult struct {
	Status  int                 `json:"status"`
	Headers map[string][]string `json:"headers"`
	Body    string              `json:"body"`
}

func fetch(t *testing.T, ctx context.Context, m *host.Module, args map[string]any) (fetchResult, json.RawMessage, error) {
	t.Helper()
	b, _ := json.Marshal(args)
	raw, err := m.Call(ctx, "egress.fetch", b, host.Limits{})
	var r fetchResult
	if err == nil {
		if jerr := json.Unmarshal(raw, &r); jerr != nil {
			t.Fatalf("result %s: %v", raw, jerr)
		}
	}
	return r, raw, err
}

// guestError asserts err is the guest's error of the given kind and
// mentioning each of want.
func guestError(t *testing.T, err error, kind abi.ErrorKind, want ...string) *abi.Error {
	t.Helper()
	var ge *abi.Error
	if !errors.As(err, &ge) || ge.Kind != kind {
		t.Fatalf("err = %v (%T), want a guest %s error", err, err, kind)
	}
	for _, w := range want {
		if !strings.Contains(ge.Message, w) {
			t.Errorf("message %q does not mention %q", ge.Message, w)
		}
	}
	return ge
}

func server(t *testing.T, h http.HandlerFunc) (*httptest.Server, *atomic.Int32) {
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		h(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv, &hits
}

func TestEgressAllowed(t *testing.T) {
	srv, _ := server(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Seen-Method", r.Method)
		b := make([]byte, r.ContentLength)
		_, _ = r.Body.Read(b)
		fmt.Fprintf(w, "hello %s %s", r.Header.Get("X-Tool"), b)
	})
	g := loopbackGrant()
	g.Methods = []string{"GET", "POST"}
	m := egressModule(t, g, nil)
	r, _, err := fetch(t, context.Background(), m, map[string]any{"method": "POST", "url": srv.URL + "/x",
		"headers": map[string]string{"X-Tool": "t1"}, "body": "payload"})
	if err != nil {
		t.Fatal(err)
	}
	if r.Status != 200 || r.Body != "hello t1 payload" || r.Headers["X-Seen-Method"][0] != "POST" {
		t.Fatalf("got %+v", r)
	}
}

func TestEgressDenied(t *testing.T) {
	srv, hits := server(t, func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "reached") })
	port := srv.URL[strings.LastIndex(srv.URL, ":")+1:]
	tests := []struct {
		name  string
		grant *toolhostv1.Grant
		args  map[string]any
		want  []string
	}{
		{"no grant", nil, map[string]any{"url": srv.URL}, []string{"grant module", "has no egress grant", "[grants."}},
		{"host", loopbackGrant(), map[string]any{"url": "http://localhost:" + port + "/"}, []string{"grant hosts", "localhost:" + port, "hosts: 127.0.0.1"}},
		{"method", loopbackGrant(), map[string]any{"method": "DELETE", "url": srv.URL}, []string{"grant methods", "DELETE", "GET, HEAD"}},
		{"scheme", &toolhostv1.Grant{Hosts: []string{"127.0.0.1"}, AllowNetworks: loopback}, map[string]any{"url": srv.URL}, []string{"grant schemes", `"http"`}},
		{"request size", &toolhostv1.Grant{Hosts: []string{"127.0.0.1"}, Schemes: []string{"http"}, Methods: []string{"POST"}, MaxRequestBytes: 4, AllowNetworks: loopback},
			map[string]any{"method": "POST", "url": srv.URL, "body": "12345"}, []string{"grant max_request_bytes", "5 bytes", "4 bytes"}},
		// The name is granted, but it resolves to a loopback address,
		// which is not: the dialled address is what counts.
		{"private address", &toolhostv1.Grant{Hosts: []string{"localhost"}, Schemes: []string{"http"}},
			map[string]any{"url": "http://localhost:" + port + "/"}, []string{"grant allow_networks", "a loopback address"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before := hits.Load()
			m := egressModule(t, tc.grant, nil)
			_, _, err := fetch(t, context.Background(), m, tc.args)
			guestError(t, err, abi.KindInternal, tc.want...)
			if hits.Load() != before {
				t.Fatal("the refused request reached the server")
			}
		})
	}
}

// A redirect is checked like the request: a hop to a host outside the
// grant is refused and never made.
func TestEgressDeniedRedirect(t *testing.T) {
	other, otherHits := server(t, func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "other") })
	otherPort := other.URL[strings.LastIndex(other.URL, ":")+1:]
	srv, _ := server(t, func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://localhost:"+otherPort+"/", http.StatusFound)
	})
	m := egressModule(t, loopbackGrant(), nil)
	_, _, err := fetch(t, context.Background(), m, map[string]any{"url": srv.URL})
	guestError(t, err, abi.KindInternal, "grant hosts", "redirect from 127.0.0.1", "localhost:"+otherPort)
	if otherHits.Load() != 0 {
		t.Fatal("the redirect was followed")
	}
}

func TestEgressOversizedResponse(t *testing.T) {
	srv, _ := server(t, func(w http.ResponseWriter, r *http.Request) { w.Write(make([]byte, 5000)) })
	g := loopbackGrant()
	g.MaxResponseBytes = 1000
	m := egressModule(t, g, nil)
	_, _, err := fetch(t, context.Background(), m, map[string]any{"url": srv.URL})
	guestError(t, err, abi.KindInternal, "egress too_large", "grant max_response_bytes", "1000 bytes")
}

// The request's deadline is the call's: a slow upstream does not hold the
// call past it, and the upstream sees the request cancelled.
func TestEgressDeadline(t *testing.T) {
	cancelled := make(chan struct{})
	srv, _ := server(t, func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
			close(cancelled)
		case <-time.After(10 * time.Second):
		}
	})
	m := egressModule(t, loopbackGrant(), nil)
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, _, err := fetch(t, ctx, m, map[string]any{"url": srv.URL})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want the deadline", err)
	}
	if took := time.Since(start); took > 3*time.Second {
		t.Fatalf("the call took %v past a 300ms deadline", took)
	}
	select {
	case <-cancelled:
	case <-time.After(5 * time.Second):
		t.Fatal("the upstream request was not cancelled")
	}
}

type fakeGov struct {
	mu       sync.Mutex
	refuse   error
	acquired []string
	reports  []string
}

func (f *fakeGov) AcquireHost(_ context.Context, hostname, port string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.acquired = append(f.acquired, hostname+":"+port)
	return f.refuse
}

func (f *fakeGov) ReportHost(_ context.Context, hostname, port string, status int, ra time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.reports = append(f.reports, fmt.Sprintf("%s:%s %d %v", hostname, port, status, ra))
}

// An upstream 429 with Retry-After becomes a transient error with
// retry_after_ms, and is reported to the governor.
func TestEgress429(t *testing.T) {
	srv, _ := server(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Retry-After", "3")
		w.WriteHeader(http.StatusTooManyRequests)
	})
	gov := &fakeGov{}
	m := egressModule(t, loopbackGrant(), gov)
	_, _, err := fetch(t, context.Background(), m, map[string]any{"url": srv.URL})
	ge := guestError(t, err, abi.KindTransient, "429")
	if ge.RetryAfterMS != 3000 {
		t.Fatalf("retry_after_ms = %d, want 3000", ge.RetryAfterMS)
	}
	port := srv.URL[strings.LastIndex(srv.URL, ":")+1:]
	if len(gov.acquired) != 1 || gov.acquired[0] != "127.0.0.1:"+port || len(gov.reports) != 1 || gov.reports[0] != "127.0.0.1:"+port+" 429 3s" {
		t.Fatalf("governor saw acquires %v reports %v", gov.acquired, gov.reports)
	}
}

type limited struct{ after time.Duration }

func (l limited) Error() string                     { return "quota upstream: busy" }
func (l limited) RetryAfterDuration() time.Duration { return l.after }

// A governor refusal reaches the guest as rate_limited, which the SDK makes
// a transient error with the governor's estimate; nothing is sent.
func TestEgressGovernorRefuses(t *testing.T) {
	srv, hits := server(t, func(w http.ResponseWriter, r *http.Request) {})
	m := egressModule(t, loopbackGrant(), &fakeGov{refuse: limited{1500 * time.Millisecond}})
	_, _, err := fetch(t, context.Background(), m, map[string]any{"url": srv.URL})
	ge := guestError(t, err, abi.KindTransient, "egress rate_limited", "quota upstream: busy")
	if ge.RetryAfterMS != 1500 || hits.Load() != 0 {
		t.Fatalf("retry_after_ms %d, hits %d; want 1500 and none", ge.RetryAfterMS, hits.Load())
	}
}

// Headers the grant injects reach the upstream, replace the guest's own,
// never reach another host on a redirect, and nothing of them comes back
// to the guest.
func TestEgressInjectedHeaderInvisible(t *testing.T) {
	const secret = "Bearer s3cret-api-key"
	var nextAuth atomic.Value
	next, _ := server(t, func(w http.ResponseWriter, r *http.Request) {
		nextAuth.Store(r.Header.Get("Authorization") + "|" + r.Header.Get("X-Api-Key"))
		fmt.Fprint(w, "next")
	})
	nextPort := next.URL[strings.LastIndex(next.URL, ":")+1:]
	var gotAuth atomic.Value
	srv, _ := server(t, func(w http.ResponseWriter, r *http.Request) {
		gotAuth.Store(r.Header.Get("Authorization"))
		if r.URL.Path == "/hop" {
			http.Redirect(w, r, "http://localhost:"+nextPort+"/", http.StatusFound)
			return
		}
		fmt.Fprint(w, "ok")
	})
	g := &toolhostv1.Grant{Hosts: []string{"127.0.0.1", "localhost"}, Schemes: []string{"http"}, AllowNetworks: loopback,
		Headers: map[string]map[string]string{"127.0.0.1": {"Authorization": secret, "X-Api-Key": "k-123"}}}
	m := egressModule(t, g, nil)
	_, raw, err := fetch(t, context.Background(), m, map[string]any{"url": srv.URL + "/",
		"headers": map[string]string{"Authorization": "Bearer guest"}})
	if err != nil {
		t.Fatal(err)
	}
	if gotAuth.Load() != secret {
		t.Fatalf("upstream saw Authorization %q, want the injected one", gotAuth.Load())
	}
	if strings.Contains(string(raw), "s3cret") || strings.Contains(string(raw), "k-123") {
		t.Fatalf("the guest saw an injected header: %s", raw)
	}
	_, raw, err = fetch(t, context.Background(), m, map[string]any{"url": srv.URL + "/hop"})
	if err != nil {
		t.Fatal(err)
	}
	if nextAuth.Load() != "|" {
		t.Fatalf("the redirect target saw injected headers %q", nextAuth.Load())
	}
	if strings.Contains(string(raw), "s3cret") {
		t.Fatalf("the guest saw an injected header: %s", raw)
	}
}

// A module importing toolhost_v1 loads without a grant; a bad grant is a
// clear error at New.
func TestEgressGrantErrors(t *testing.T) {
	for _, g := range []toolhostv1.Grant{
		{Hosts: []string{"https://x.com"}},
		{Hosts: []string{"x.com"}, Methods: []string{"GE T"}},
		{Hosts: []string{"x.com"}, Schemes: []string{"ftp"}},
		{Hosts: []string{"x.com"}, Headers: map[string]map[string]string{"x.com": {"Host": "y"}}},
	} {
		_, err := host.New(context.Background(), host.Config{CacheDir: "off", Egress: toolhostv1.Egress{Grants: map[string]toolhostv1.Grant{"m.wasm": g}}})
		if err == nil || !strings.Contains(err.Error(), "egress grant for m.wasm") {
			t.Errorf("grant %+v: err %v", g, err)
		}
	}
}
