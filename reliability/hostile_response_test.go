package reliability_test

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/toolhost/toolhost/dispatcher"
	"github.com/toolhost/toolhost/host"
)

// Hostile responses: the module loads and returns from toolhost_call, but
// what it returns breaks the ABI. Each is an internal error, never retried,
// and the host reads no more of guest memory than the output cap allows.

// TestHostileResponsePointer: a response that points outside guest memory,
// past its end or wrapping around 4 GiB, is refused without a read.
func TestHostileResponsePointer(t *testing.T) {
	cases := []struct {
		name     string
		ptr, len int
		want     string
	}{
		{"past-the-end", 131072, 16, "returned ptr=131072 len=16, outside its 131072-byte memory"},
		{"straddles-the-end", 131072 - 8, 16, "outside its 131072-byte memory"},
		{"wraps-around-4GiB", 0xFFFF_FFF0, 0x20, "returned ptr=4294967280 len=32, outside"},
		{"huge-length", 0, 0x7FFF_FFFF, "over the 1048576-byte output cap"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			hostile(t, rigConfig{}, func(r *rig) {
				wasm := assemble(t, "ptr", module{
					Pages:    2,
					Manifest: manifest("wat.ptr"),
					Result:   pack(tc.ptr, tc.len),
				})
				r.mustLoad("ptr.wasm", wasm)
				o := r.call("wat.ptr", `{}`, dispatcher.Options{})
				r.fails(o, dispatcher.KindInternal, tc.want)
				if o.Err.Attempts != 1 {
					r.t.Errorf("attempts = %d; an internal error must not be retried", o.Err.Attempts)
				}
			})
		})
	}
	t.Run("host-fixture-oob", func(t *testing.T) {
		hostile(t, rigConfig{}, func(r *rig) {
			r.mustLoad("oob.wasm", hostWAT(t, "oob"))
			r.fails(r.call("wat.oob", `{}`, dispatcher.Options{}), dispatcher.KindInternal, "outside its 65536-byte memory")
		})
	})
}

// TestHostileHugeResponse: a 50 MB response is refused by its length,
// before the host copies a byte of it. The instance's own memory (the
// guest declared 50 MB at start, 64 MiB of host buffer) is the only large
// allocation the call may make.
func TestHostileHugeResponse(t *testing.T) {
	const size = 50_000_000
	t.Run("wat", func(t *testing.T) {
		// Instantiating 50 MB of memory takes well over the suite's short
		// 500 ms load bound on a loaded 2-core machine; this case is about
		// the response, not load time.
		hostile(t, rigConfig{DescribeTimeout: 30 * time.Second}, func(r *rig) {
			pages := size/65536 + 1
			wasm := assemble(t, "huge", module{
				Pages:    pages,
				Manifest: manifest("wat.huge"),
				Result:   pack(0, size),
			})
			r.mustLoad("huge.wasm", wasm)
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			o := r.call("wat.huge", `{}`, dispatcher.Options{})
			runtime.ReadMemStats(&after)
			r.fails(o, dispatcher.KindInternal, "returned 50000000 bytes, over the 1048576-byte output cap")
			grew := after.TotalAlloc - before.TotalAlloc
			r.t.Logf("host allocated %s during the call", mib(grew))
			if grew > host.DefaultMemoryLimit+8<<20 {
				r.t.Errorf("the call allocated %s: more than the instance's memory, so the response was copied", mib(grew))
			}
		})
	})
	// A Go guest really building a large result, with memory enough to do
	// it (256 MiB): the host refuses it the same way. JSON-encoding 50 MB
	// takes the guest itself about 15 s (Go compiled to wasm is slow at
	// it; the profile is all guest code), so the short run uses 2 MB.
	t.Run("go", func(t *testing.T) {
		n := 2_000_000
		if full() {
			n = size
		}
		hostile(t, rigConfig{Limits: host.Limits{MemoryBytes: 256 << 20}}, func(r *rig) {
			r.mustLoad("misbehave.wasm", misbehaveWASM(t))
			o := r.timed(60*time.Second, "huge", fmt.Sprintf(`{"n":%d}`, n), dispatcher.Options{})
			r.fails(o, dispatcher.KindInternal, fmt.Sprintf("returned %d bytes, over the 1048576-byte output cap", n+13))
		})
	})
}

// TestHostileResponseEncoding: responses that are not valid UTF-8, not
// JSON, not one JSON object, or JSON nested past the decoder's depth limit.
func TestHostileResponseEncoding(t *testing.T) {
	cases := []struct {
		name, response, want string
	}{
		{"invalid-utf8", "{\"result\":\"\xff\xfe\"}", "response: not valid UTF-8"},
		{"overlong-utf8", "{\"result\":\"\xc0\xaf\"}", "response: not valid UTF-8"},
		{"not-json", "this is not JSON", "response: not a JSON object"},
		{"empty", "", "response: not a JSON object"},
		{"truncated", `{"result":`, "response: not a JSON object"},
		{"nul-byte", "{\"result\":1}\x00", "response: trailing data after the JSON object"},
		{"two-objects", `{"result":1}{"result":2}`, "response: trailing data after the JSON object"},
		{"array", `[{"result":1}]`, "response: not a JSON object"},
		{"deeply-nested", `{"result":` + strings.Repeat("[", 100_000) + strings.Repeat("]", 100_000) + `}`, "response: not a JSON object"},
		{"both", `{"result":1,"error":{"kind":"internal","message":"x"}}`, `has both "result" and "error"`},
		{"bad-kind", `{"error":{"kind":"fatal","message":"x"}}`, `error kind "fatal" is not transient, schema or internal`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			hostile(t, rigConfig{}, func(r *rig) {
				r.mustLoad("resp.wasm", assemble(t, "resp", module{Manifest: manifest("wat.resp"), Response: []byte(tc.response)}))
				r.fails(r.call("wat.resp", `{}`, dispatcher.Options{}), dispatcher.KindInternal, tc.want)
			})
		})
	}
	// The committed host fixtures, for completeness.
	for _, name := range []string{"invalidutf8", "garbage"} {
		t.Run("host-fixture-"+name, func(t *testing.T) {
			hostile(t, rigConfig{}, func(r *rig) {
				r.mustLoad(name+".wasm", hostWAT(t, name))
				r.fails(r.call("wat."+name, `{}`, dispatcher.Options{}), dispatcher.KindInternal, "response: not")
			})
		})
	}
}
