package reliability_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"path/filepath"
	"testing"

	"github.com/toolhost/toolhost/breaker"
	"github.com/toolhost/toolhost/dispatcher"
	"github.com/toolhost/toolhost/host"
	"github.com/toolhost/toolhost/imports/toolhostv1"
	"github.com/toolhost/toolhost/internal/testkit/testwasm"
	"github.com/toolhost/toolhost/loader"
)

// breakOffHandshakes is a plain TCP server that reads the start of a TLS
// ClientHello and closes the connection: what a caller gets by pointing
// a fetching tool at https:// on a plain port.
func breakOffHandshakes(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			io.ReadFull(c, make([]byte, 5)) // the TLS record header
			c.Close()
		}
	}()
	return "https://" + ln.Addr().String() + "/"
}

// TestHostileUpstreamFailuresKeepBreakerClosed holds issue 20's finding
// (red team round 3): any caller opened a fetching tool's breaker for
// every caller with a few calls to a URL whose server broke the
// connection. Upstream failures at a destination the caller chose are not
// the tool's: after five broken handshakes and five 502 answers (the
// breaker opens after two of the tool's own failures), a call to a good
// upstream still runs.
func TestHostileUpstreamFailuresKeepBreakerClosed(t *testing.T) {
	good := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { fmt.Fprint(w, "ok") }))
	defer good.Close()
	failing := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "down", http.StatusBadGateway)
	}))
	defer failing.Close()
	broken := breakOffHandshakes(t)

	ctx := context.Background()
	wasm := testwasm.Go(t, "./host/testdata/egress")
	rt, err := host.New(ctx, host.Config{CacheDir: cacheDir, Logger: slog.New(slog.DiscardHandler), Egress: toolhostv1.Egress{
		Grants: map[string]toolhostv1.Grant{filepath.Base(wasm): {Hosts: []string{"127.0.0.1"}, Schemes: []string{"http", "https"},
			AllowNetworks: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}}}}})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close(ctx)
	live, err := loader.Open(ctx, rt, testwasm.Dir(t, wasm), loader.Options{}, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer live.Close()
	d := dispatcher.New(live, dispatcher.Config{Breaker: breaker.Settings{Failures: 2}})
	call := func(url string) dispatcher.Outcome {
		args, _ := json.Marshal(map[string]any{"url": url, "fail_status": true})
		return d.Do(ctx, dispatcher.Call{Tool: "egress.fetch", Args: args, Options: dispatcher.Options{Budget: ptr(1)}})
	}
	for _, url := range []string{broken, failing.URL} {
		for i := range 5 {
			if o := call(url); o.Err == nil || o.Err.Kind == dispatcher.KindCircuitOpen {
				t.Fatalf("call %d to %s: %+v; want the upstream's failure, not circuit_open", i+1, url, o.Err)
			}
		}
	}
	if o := call(good.URL); o.Err != nil {
		t.Fatalf("a good upstream after broken handshakes and 502s: %v", o.Err)
	}
}
