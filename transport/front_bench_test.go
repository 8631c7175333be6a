//go:build unix

package transport_test

import (
	"bytes"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"github.com/toolhost/toolhost/dispatcher"
	"github.com/toolhost/toolhost/internal/testkit/mcphttp"
	"github.com/toolhost/toolhost/transport"
)

// BenchmarkFrontCall is one tools/call on a 2025-11-25 session through
// HTTPHandler, in process: no network and no client, so what it measures
// is toolhost's HTTP front (the body read, routing and id checks, the
// cancel filter), the SDK's server side and the dispatcher in front of a
// handler in plain Go. cpu-ns/op is the process's CPU time per call (the
// SDK's goroutines included), steadier than the wall clock on a shared
// machine. Arms: text of 7 bytes and of 16 KiB, each with
// and without a _meta carrying a progress token.
func BenchmarkFrontCall(b *testing.B) {
	h := &harness{fakes: fakes{entered: make(chan struct{}), release: make(chan struct{})}}
	reg := h.registry(b)
	srv := transport.New(dispatcher.New(reg, dispatcher.Config{}), reg, transport.Options{Version: "bench", Logger: slog.New(slog.DiscardHandler)})
	handler := srv.HTTPHandler()
	sid := mcphttp.Session(b, handler)
	texts := map[string]string{"7B": "one two", "16KiB": strings.Repeat("lorem ipsum dolor sit amet, ", 16<<10/28)}
	for _, size := range []string{"7B", "16KiB"} {
		for _, meta := range []string{"plain", "meta"} {
			b.Run(fmt.Sprintf("args=%s/%s", size, meta), func(b *testing.B) {
				m := ""
				if meta == "meta" {
					m = `,"_meta":{"progressToken":"p1"}`
				}
				body := []byte(fmt.Sprintf(`{"jsonrpc":"2.0","id":%%d,"method":"tools/call","params":{"name":"text_count","arguments":{"text":%q}%s}}`, texts[size], m))
				b.ReportAllocs()
				b.SetBytes(int64(len(body)))
				id := 0
				cpu := processCPU()
				for b.Loop() {
					id++
					w := mcphttp.Post(handler, sid, fmt.Appendf(nil, string(body), id))
					if w.Code != http.StatusOK || !bytes.Contains(w.Body.Bytes(), []byte(`"words"`)) {
						b.Fatalf("%d %s", w.Code, w.Body)
					}
				}
				b.ReportMetric(float64(processCPU()-cpu)/float64(b.N), "cpu-ns/op")
			})
		}
	}
}
