//go:build unix

package host_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/toolhost/toolhost/host"
	"github.com/toolhost/toolhost/internal/testkit/testwasm"
)

// BenchmarkFreshSnapshot puts a fresh call of a module that runs
// _initialize beside one of the same module started from its snapshot
// (host.Config.Snapshot), call by call in one loop, as BenchmarkFreshRatio
// does, and charges each arm the process CPU time its calls took.
func BenchmarkFreshSnapshot(b *testing.B) {
	ctx := context.Background()
	for _, c := range []struct {
		name, tool, want string
		args             []byte
		path             func(testing.TB) string
	}{
		{"sdk-text", "text.count", `{"words":5,"lines":1,"runes":19,"bytes":19}`, []byte(`{"text":"the cat and the hat"}`),
			func(t testing.TB) string { return testwasm.Go(t, "./tools-src/text") }},
		{"c", "wordfreq.top", `{"words":5,"unique":4,"top":[{"word":"the","count":2}]}`,
			[]byte(`{"text":"the cat and the hat","top":1}`), func(t testing.TB) string { return testwasm.C(t, "tools-src-c/wordfreq") }},
	} {
		b.Run(c.name, func(b *testing.B) {
			path := c.path(b)
			var mods [2]*host.Module
			for i, snap := range []bool{false, true} {
				rt := newRuntime(b, host.Config{Snapshot: map[string]bool{filepath.Base(path): snap}})
				m, err := rt.LoadFile(ctx, path)
				if err != nil {
					b.Fatal(err)
				}
				mods[i] = m
			}
			var cpu [2]time.Duration
			b.ReportAllocs()
			for b.Loop() {
				for i, m := range mods {
					start := processCPU()
					res, err := m.Call(ctx, c.tool, c.args, host.Limits{})
					cpu[i] += processCPU() - start
					if err != nil || string(res) != c.want {
						b.Fatalf("call = %s, %v; want %s", res, err, c.want)
					}
				}
			}
			ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) / float64(b.N) }
			b.ReportMetric(ms(cpu[0]), "init-cpu-ms/op")
			b.ReportMetric(ms(cpu[1]), "snapshot-cpu-ms/op")
			b.ReportMetric(float64(cpu[1])/float64(cpu[0]), "ratio")
		})
	}
}
