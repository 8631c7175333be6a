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
