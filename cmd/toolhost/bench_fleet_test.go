package main

import (
	"context"
	"fmt"
	"runtime"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolhost/toolhost/internal/testkit/redistest"
)

// BenchmarkFleetThroughput is calls per second through 1, 2 and 3 serve
// processes sharing one Redis, the client spreading calls round-robin over
// them (what the load balancer of `make fleet` does, without its own CPU).
// Sixteen callers at once; each op is one tools/call. -count repeats each
// sub-benchmark in a row, so alternate them with a loop of runs:
//
//	for i in $(seq 5); do go test -run '^$' -bench FleetThroughput -benchtime 200x ./cmd/toolhost/; done > fleet.txt
//	benchstat -col /replicas fleet.txt
func BenchmarkFleetThroughput(b *testing.B) {
	rs := redistest.Start(b)
	plugins := pluginsDir(b)
	var reps []*server
	for range 3 {
		reps = append(reps, startServer(b, plugins, "--watch=false", "--redis", rs.URL()))
	}
	for _, tool := range []string{"text.count", "wat.echo"} {
		for n := 1; n <= 3; n++ {
			b.Run(fmt.Sprintf("tool=%s/replicas=%d", tool, n), func(b *testing.B) {
				// Sessions are made before the clock starts: each caller
				// has one to every replica in use.
				const callers = 16
				pool := make(chan []*mcp.ClientSession, callers)
				for range callers {
					var sessions []*mcp.ClientSession
					for _, r := range reps[:n] {
						sessions = append(sessions, r.client(b))
					}
					pool <- sessions
				}
				var next atomic.Int64
				b.SetParallelism(callers / runtime.GOMAXPROCS(0))
				b.ReportAllocs()
				b.ResetTimer()
				b.RunParallel(func(pb *testing.PB) {
					sessions := <-pool
					for pb.Next() {
						cs := sessions[next.Add(1)%int64(n)]
						res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: map[string]any{"text": "a b c"}})
						if err != nil || res.IsError {
							b.Errorf("%s: %v %+v", tool, err, res)
							return
						}
					}
				})
			})
		}
	}
}
