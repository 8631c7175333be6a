//go:build unix

package host_test

import (
	"context"
	"syscall"
	"testing"
	"time"

	"github.com/toolhost/toolhost/host"
	"github.com/toolhost/toolhost/internal/testwasm"
)

// BenchmarkFresh is one text.count call in a fresh instance, through
// host.Module.Call, for each kind of guest doing the same work:
//
//   - sdk-text: tools-src/text, the real module built with the Go SDK;
//   - sdk-count: text.count alone built with the Go SDK (testdata/sdkcount);
//   - minimal: a hand-written Go reactor doing the same with the standard
//     library only (testdata/minimal), the floor for a Go guest;
//   - c: the C guest's wordfreq.top on the same text (tools-src-c/wordfreq).
//
// Besides time it reports cpu-ms/op, the process's CPU time (user and
// system, every thread: wazero's compiled code, the host and Go's GC) per
// call, which is what a busy server pays.
func BenchmarkFresh(b *testing.B) {
	ctx := context.Background()
	rt, _, _ := sharedRuntime(b)
	load := func(b *testing.B, path string) *host.Module {
		m, err := rt.LoadFile(ctx, path)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { m.Close(ctx) })
		return m
	}
	text := []byte(`{"text":"the cat and the hat"}`)
	counts := `{"words":5,"lines":1,"runes":19,"bytes":19}`
	for _, c := range []struct {
		name, tool, want string
		args             []byte
		path             func(testing.TB) string
	}{
		{"sdk-text", "text.count", counts, text, func(t testing.TB) string { return testwasm.Go(t, "./tools-src/text") }},
		{"sdk-count", "text.count", counts, text, func(t testing.TB) string { return testwasm.Go(t, "./host/testdata/sdkcount") }},
		{"minimal", "text.count", counts, text, func(t testing.TB) string { return testwasm.Go(t, "./host/testdata/minimal") }},
		{"c", "wordfreq.top", `{"words":5,"unique":4,"top":[{"word":"the","count":2}]}`,
			[]byte(`{"text":"the cat and the hat","top":1}`), func(t testing.TB) string { return testwasm.C(t, "tools-src-c/wordfreq") }},
	} {
		b.Run(c.name, func(b *testing.B) {
			m := load(b, c.path(b))
			b.ReportAllocs()
			start := processCPU()
			for b.Loop() {
				res, err := m.Call(ctx, c.tool, c.args, host.Limits{})
				if err != nil || string(res) != c.want {
					b.Fatalf("call = %s, %v; want %s", res, err, c.want)
				}
			}
			b.ReportMetric(float64(processCPU()-start)/float64(time.Millisecond)/float64(b.N), "cpu-ms/op")
		})
	}
}

// processCPU is the CPU time the process has used, user and system.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
