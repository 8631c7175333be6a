//go:build unix

package transport_test

import (
	"io"
	"net"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/toolhost/toolhost/transport"
)

// BenchmarkConnsRequest is one authenticated keep-alive request through
// a real http.Server on loopback, on a plain listener (arm plain) and on
// Conns (arm conns): what the per-connection bookkeeping costs a request.
func BenchmarkConnsRequest(b *testing.B) {
	tokens, err := transport.ParseTokens("bench", strings.NewReader("alice:"+aliceToken+"\n"))
	if err != nil {
		b.Fatal(err)
	}
	for _, arm := range []string{"arm=plain", "arm=conns"} {
		b.Run(arm, func(b *testing.B) {
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				b.Fatal(err)
			}
			hs := &http.Server{Handler: tokens.Require(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "ok") }))}
			var served net.Listener = ln
			if arm == "arm=conns" {
				c := transport.LimitConns(ln, transport.ConnLimits{Max: 1024, PerPeer: 256})
				c.Install(hs)
				served = c
			}
			go hs.Serve(served)
			defer hs.Close()
			client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
			url := "http://" + ln.Addr().String() + "/mcp"
			b.ReportAllocs()
			b.SetParallelism(4)
			start := processCPU()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					req, _ := http.NewRequest("GET", url, nil)
					req.Header.Set("Authorization", "Bearer "+aliceToken)
					resp, err := client.Do(req)
					if err != nil {
						b.Error(err)
						return
					}
					io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
				}
			})
			b.ReportMetric(float64(processCPU()-start)/float64(time.Microsecond)/float64(b.N), "cpu-µs/op")
		})
	}
}

// processCPU is this process's CPU time (server and client alike).
func processCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
