package reliability_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/toolhost/toolhost/dispatcher"
	"github.com/toolhost/toolhost/host"
	"github.com/toolhost/toolhost/transport"
)

// Hostile manifests: valid documents, but big.

// TestHostileManyTools: 10,000 tools in one manifest load, and are
// listed, called and swapped into an MCP server, each within a bound
// (generous: the point is "seconds, not minutes").
func TestHostileManyTools(t *testing.T) {
	const n = 10_000
	hostile(t, rigConfig{}, func(r *rig) {
		var b strings.Builder
		b.WriteString(`{"abi":1,"tools":[`)
		for i := range n {
			if i > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, `{"name":"t.%05d","input_schema":{"type":"object","properties":{"x":{"type":"integer"}}}}`, i)
		}
		b.WriteString(`]}`)
		t.Logf("manifest: %d bytes", b.Len())
		wasm := assemble(t, "many", module{Manifest: []byte(b.String()), Response: []byte(`{"result":"ok"}`)})

		start := time.Now()
		r.mustLoad("many.wasm", wasm)
		bound(t, "loading 10,000 tools", time.Since(start), 20*time.Second)
		if got := len(r.live.Registry().List()); got != n+1 {
			t.Fatalf("registry lists %d tools, want %d", got, n+1)
		}
		start = time.Now()
		srv := transport.New(r.d, r.live.Registry(), transport.Options{Logger: r.logger()})
		bound(t, "listing them in an MCP server", time.Since(start), 20*time.Second)
		start = time.Now()
		srv.SetTools(r.live.Registry()) // a reload that changes nothing
		bound(t, "an unchanged reload", time.Since(start), 5*time.Second)
		for _, name := range []string{"t.00000", "t.09999"} {
			if o := r.call(name, `{"x":1}`, dispatcher.Options{}); o.Err != nil || string(o.Result) != `"ok"` {
				t.Fatalf("%s = %s, %v", name, o.Result, o.Err)
			}
		}
		r.fails(r.call("t.05000", `{"x":"one"}`, dispatcher.Options{}), dispatcher.KindSchema, "")
	})
}

// TestHostileHugeSchema: a manifest carrying a 5 MB input schema. The
// manifest is capped at the output limit (1 MiB by default), so it is
// refused at load; a schema just under the cap loads; with the limit
// raised, the 5 MB one loads too, and calls go on being served while it
// does (loading is off the request path).
//
// Compiling a schema costs time quadratic in its number of subschemas
// (santhosh-tekuri/jsonschema v6 looks each one up in its queue linearly),
// and the loader compiles every schema twice: the 5 MB schema (about
// 40,000 properties) takes about 10 s to load on 2 cores, one just under
// the default cap about 0.4 s.
func TestHostileHugeSchema(t *testing.T) {
	manifestOf := func(size int) []byte {
		m, _ := json.Marshal(map[string]any{"abi": 1, "tools": []any{map[string]any{
			"name": "wat.schema", "input_schema": json.RawMessage(hugeSchema(size))}}})
		return m
	}
	big := manifestOf(5 << 20)
	t.Run("default-cap", func(t *testing.T) {
		hostile(t, rigConfig{}, func(r *rig) {
			wasm := assemble(t, "schema", module{Manifest: big, Response: []byte(`{"result":"ok"}`)})
			wantIn(t, r.mustRefuse("schema.wasm", read(t, wasm)),
				fmt.Sprintf("toolhost_describe: returned %d bytes, over the 1048576-byte output cap", len(big)))
		})
	})
	t.Run("just-under-the-default-cap", func(t *testing.T) {
		hostile(t, rigConfig{}, func(r *rig) {
			m := manifestOf(host.DefaultOutputLimit - 300)
			wasm := assemble(t, "schema", module{Manifest: m, Response: []byte(`{"result":"ok"}`)})
			start := time.Now()
			r.mustLoad("schema.wasm", wasm)
			bound(t, fmt.Sprintf("loading a %d-byte manifest", len(m)), time.Since(start), 10*time.Second)
		})
	})
	t.Run("raised-cap", func(t *testing.T) {
		if !full() {
			t.Skip("about 10 s of schema compilation: run by make reliability (TOOLHOST_RELIABILITY=full)")
		}
		hostile(t, rigConfig{Limits: host.Limits{OutputBytes: 8 << 20}}, func(r *rig) {
			wasm := assemble(t, "schema", module{Manifest: big, Response: []byte(`{"result":"ok"}`)})
			served := make(chan int)
			stop := make(chan struct{})
			go func() { // calls during the load: each must be answered
				n := 0
				for {
					select {
					case <-stop:
						served <- n
						return
					default:
					}
					if o := r.call("wat.echo", `{}`, dispatcher.Options{}); o.Err != nil {
						t.Errorf("echo during the load: %v", o.Err)
					}
					n++
				}
			}()
			start := time.Now()
			r.mustLoad("schema.wasm", wasm)
			bound(t, "loading a 5 MB schema", time.Since(start), 60*time.Second)
			close(stop)
			t.Logf("%d echo calls answered during the load", <-served)
			start = time.Now()
			if o := r.call("wat.schema", `{"p0":"a","p9999":"b"}`, dispatcher.Options{}); o.Err != nil {
				t.Fatalf("valid arguments: %v", o.Err)
			}
			r.fails(r.call("wat.schema", `{"p7":7}`, dispatcher.Options{}), dispatcher.KindSchema, "/p7")
			bound(t, "two validations", time.Since(start), 5*time.Second)
		})
	})
}

// hugeSchema is an object schema of about size bytes: string properties
// p0, p1, ..., each with a description, as a generated API client might
// declare them.
func hugeSchema(size int) []byte {
	var b strings.Builder
	b.WriteString(`{"type":"object","properties":{`)
	for i := 0; b.Len() < size; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"p%d":{"type":"string","maxLength":64,"description":"property number %d of a very wide object, described at length so the schema is big"}`, i, i)
	}
	b.WriteString(`}}`)
	return []byte(b.String())
}

// bound fails the test when took is over max, and logs it otherwise.
func bound(t *testing.T, what string, took, max time.Duration) {
	t.Helper()
	t.Logf("%s took %v", what, took.Round(time.Millisecond))
	if took > max {
		t.Errorf("%s took %v, over %v", what, took, max)
	}
}
