package reliability_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
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

// TestHostileCostlySchema: a module whose input schema multiplies the
// validator's work at every level of the arguments (a recursive $ref
// followed by two anyOf branches: 47 bytes of nested arrays cost 59 s of
// CPU). It is refused at load, saying what to factor out.
func TestHostileCostlySchema(t *testing.T) {
	const schema = `{"type":"object","properties":{"a":{"$ref":"#/$defs/n"}},"$defs":{"n":{"anyOf":[
		{"type":"array","items":{"$ref":"#/$defs/n"}},
		{"type":"array","items":{"$ref":"#/$defs/n"},"minItems":2}]}}}`
	hostile(t, rigConfig{}, func(r *rig) {
		m, _ := json.Marshal(map[string]any{"abi": 1, "tools": []any{map[string]any{
			"name": "wat.costly", "input_schema": json.RawMessage(schema)}}})
		wasm := assemble(t, "costly", module{Manifest: m, Response: []byte(`{"result":"ok"}`)})
		wantIn(t, r.mustRefuse("costly.wasm", read(t, wasm)), "anyOf/oneOf/allOf branches that share a $ref")
		r.fails(r.call("wat.costly", `{"a":[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]}`, dispatcher.Options{}), dispatcher.KindNotFound, "wat.costly")
	})
}

// TestHostileDuplicateKeys: a client names a key twice, hoping the schema
// checks one value while the guest reads the other. The call is refused
// as schema before any attempt.
func TestHostileDuplicateKeys(t *testing.T) {
	hostile(t, rigConfig{}, func(r *rig) {
		o := r.call("wat.echo", `{"n":1,"x":{"n":2,"n":3}}`, dispatcher.Options{})
		r.fails(o, dispatcher.KindSchema, `"n" appears more than once`)
		if o.Attempts != 0 {
			t.Fatalf("%d attempts; the guest must not see the arguments", o.Attempts)
		}
	})
}

// TestHostileEgressDenialsKeepBreakerClosed: a client asks a tool with an
// egress grant for URLs the grant does not allow, again and again. Each
// call fails, but the tool's breaker stays closed: before, the denials
// counted as the tool's failures and any client could shut a granted tool
// for everyone. Real parts throughout: the egress test module, its grant,
// the loader, the dispatcher and an upstream on loopback.
func TestHostileEgressDenialsKeepBreakerClosed(t *testing.T) {
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { fmt.Fprint(w, "ok") }))
	defer upstream.Close()
	ctx := context.Background()
	wasm := testwasm.Go(t, "./host/testdata/egress")
	rt, err := host.New(ctx, host.Config{CacheDir: cacheDir, Logger: slog.New(slog.DiscardHandler), Egress: toolhostv1.Egress{
		Grants: map[string]toolhostv1.Grant{filepath.Base(wasm): {Hosts: []string{"127.0.0.1"}, Schemes: []string{"http"},
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
		args, _ := json.Marshal(map[string]string{"url": url})
		return d.Do(ctx, dispatcher.Call{Tool: "egress.fetch", Args: args, Options: dispatcher.Options{Budget: ptr(1)}})
	}
	for _, url := range []string{"http://localhost:1/", "https://127.0.0.1/", "http://169.254.169.254/", "not a url", "http://example.com/"} {
		for range 3 {
			if o := call(url); o.Err == nil || o.Err.Kind == dispatcher.KindCircuitOpen {
				t.Fatalf("%s: %+v; want the denial, not circuit_open", url, o.Err)
			}
		}
	}
	if o := call(upstream.URL); o.Err != nil {
		t.Fatalf("a granted request after 15 denials: %v", o.Err)
	}
}

func ptr[T any](v T) *T { return &v }
