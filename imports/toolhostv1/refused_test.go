package toolhostv1_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"testing"

	"github.com/toolhost/toolhost/abi"
	"github.com/toolhost/toolhost/imports/toolhostv1"
)

// A call that fails because the host refused its egress (a host the grant
// does not name, a malformed request) says so with an
// *toolhostv1.EgressRefusedError around the guest's error, so the dispatcher can
// keep it off the tool's breaker; a call that failed for the upstream's
// own reasons (here: nothing listening) does not.
func TestEgressRefusedCallIsMarked(t *testing.T) {
	srv, _ := server(t, func(w http.ResponseWriter, _ *http.Request) { fmt.Fprint(w, "ok") })
	m := egressModule(t, loopbackGrant(), nil)
	for _, tc := range []struct {
		name    string
		url     string
		refused abi.EgressErrorKind
	}{
		{"host not granted", "http://localhost:1/", abi.EgressDenied},
		{"scheme not granted", "https://127.0.0.1/", abi.EgressDenied},
		{"malformed", "not a url", abi.EgressInvalid},
		{"upstream down", "http://127.0.0.1:1/", ""},
		{"granted", srv.URL, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := fetch(t, context.Background(), m, map[string]any{"url": tc.url})
			var re *toolhostv1.EgressRefusedError
			got := errors.As(err, &re)
			if got != (tc.refused != "") || got && re.EgressRefusal().Kind != tc.refused {
				t.Fatalf("err %v (%T); want a refusal of kind %q: %v", err, err, tc.refused, got)
			}
			if tc.url != srv.URL && !errors.As(err, new(*abi.Error)) {
				t.Fatalf("err %v does not unwrap to the guest's error", err)
			}
		})
	}
}

// TestUpstreamFailedCallIsMarked: a call that failed after an upstream
// broke its connection, or answered 5xx, carries the destination for the
// dispatcher (which does not count it against the tool), and still
// unwraps to the guest's own error; host refusals keep their own mark.
func TestUpstreamFailedCallIsMarked(t *testing.T) {
	srv, _ := server(t, func(w http.ResponseWriter, _ *http.Request) { http.Error(w, "down", http.StatusServiceUnavailable) })
	m := egressModule(t, loopbackGrant(), nil)
	for _, tc := range []struct {
		name, url, dest string
	}{
		{"connection refused", "http://127.0.0.1:1/", "127.0.0.1:1"},
		{"5xx", srv.URL, srv.Listener.Addr().String()},
		{"refused by the host", "http://localhost:1/", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := fetch(t, context.Background(), m, map[string]any{"url": tc.url, "fail_status": true})
			var ue *toolhostv1.UpstreamFailedError
			if errors.As(err, &ue) != (tc.dest != "") || tc.dest != "" && ue.EgressDestination() != tc.dest {
				t.Fatalf("err %v (%T); want an upstream failure at %q", err, err, tc.dest)
			}
			if !errors.As(err, new(*abi.Error)) {
				t.Fatalf("err %v does not unwrap to the guest's error", err)
			}
		})
	}
}
