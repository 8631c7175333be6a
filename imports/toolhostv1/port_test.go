package toolhostv1

import (
	"context"
	"crypto/tls"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"testing"
)

// Headers injected for a pattern that names the scheme's default port
// ("example.com:443") reach a request whose URL leaves the port out
// ("https://example.com/"). They were never sent: the injector matched
// against URL.Port(), which is empty for such a URL.
func TestEgressHeadersDefaultPort(t *testing.T) {
	for _, tc := range []struct {
		name, scheme, pattern string
		tls                   bool
	}{
		{"https", "https", "example.com:443", true},
		{"http", "http", "example.com:80", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := make(chan string, 1)
			h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { got <- r.Header.Get("X-Api-Key") })
			srv := httptest.NewUnstartedServer(h)
			if tc.tls {
				srv.StartTLS()
			} else {
				srv.Start()
			}
			defer srv.Close()
			g, err := compileGrant("m.wasm", Grant{Hosts: []string{"example.com"}, Schemes: []string{tc.scheme},
				AllowNetworks: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")},
				Headers:       map[string]map[string]string{tc.pattern: {"X-Api-Key": "k-443"}}}, nil)
			if err != nil {
				t.Fatal(err)
			}
			// The name resolves to the test server; the cert httptest
			// serves is valid for example.com.
			addr := srv.Listener.Addr().String()
			g.tr.DialContext = func(ctx context.Context, network, _ string) (net.Conn, error) {
				return (&net.Dialer{}).DialContext(ctx, network, addr)
			}
			if tc.tls {
				g.tr.TLSClientConfig = &tls.Config{RootCAs: srv.Client().Transport.(*http.Transport).TLSClientConfig.RootCAs}
			}
			resp, err := g.client.Get(tc.scheme + "://example.com/")
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if v := <-got; v != "k-443" {
				t.Fatalf("upstream saw X-Api-Key %q, want the header injected for %s", v, tc.pattern)
			}
		})
	}
}
