//go:build unix

package host_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/toolhost/toolhost/host"
	"github.com/toolhost/toolhost/internal/testkit/testwasm"
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

// BenchmarkFreshRatio puts a Go SDK module beside the minimal reactor
// (with regexp linked in, for tools-src/text, as well as without) call by
// call: each iteration makes one fresh call of each, in turn, and
// charges each the process CPU time its call took. On a shared machine
// whose load swings from second to second, alternating call by call keeps
// the ratio (reported as ratio) honest where separate benchmarks would
// each see a different load.
func BenchmarkFreshRatio(b *testing.B) {
	ctx := context.Background()
	rt, _, _ := sharedRuntime(b)
	load := func(b *testing.B, pkg string) *host.Module {
		m, err := rt.LoadFile(ctx, testwasm.Go(b, pkg))
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { m.Close(ctx) })
		return m
	}
	args := []byte(`{"text":"the cat and the hat"}`)
	want := `{"words":5,"lines":1,"runes":19,"bytes":19}`
	// sdk-text beside minimalregexp: the same imports on both sides
	// (text.find links regexp), so only the SDK's own cost is left.
	for _, arm := range []struct{ name, sdk, floor string }{
		{"sdk-count-vs-minimal", "./host/testdata/sdkcount", "./host/testdata/minimal"},
		{"sdk-text-vs-minimal", "./tools-src/text", "./host/testdata/minimal"},
		{"sdk-text-vs-minimalregexp", "./tools-src/text", "./host/testdata/minimalregexp"},
	} {
		b.Run(arm.name, func(b *testing.B) {
			cpu := alternate(b, []*host.Module{load(b, arm.sdk), load(b, arm.floor)}, func(m *host.Module) error {
				res, err := m.Call(ctx, "text.count", args, host.Limits{})
				if err != nil || string(res) != want {
					return fmt.Errorf("call = %s, %v; want %s", res, err, want)
				}
				return nil
			})
			ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) / float64(b.N) }
			b.ReportMetric(ms(cpu[0]), "sdk-cpu-ms/op")
			b.ReportMetric(ms(cpu[1]), "minimal-cpu-ms/op")
			b.ReportMetric(float64(cpu[0])/float64(cpu[1]), "ratio")
		})
	}
}

// alternate calls each module in turn, once per iteration, and returns
// the process CPU each module's calls took: on a machine whose speed
// swings from second to second, every module sees the same swings.
func alternate(b *testing.B, mods []*host.Module, call func(*host.Module) error) []time.Duration {
	cpu := make([]time.Duration, len(mods))
	for b.Loop() {
		for i, m := range mods {
			start := processCPU()
			err := call(m)
			cpu[i] += processCPU() - start
			if err != nil {
				b.Fatal(err)
			}
		}
	}
	return cpu
}

// processCPU is the CPU time the process has used, user and system.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkFreshAB puts builds of one text.count module side by side, call
// by call, fresh and reused: TOOLHOST_BENCH_AB names their files, comma
// separated (the benchmark skips without it). Each iteration calls each
// module once, in turn, and charges each the process CPU its call took,
// so on a machine whose speed swings from second to second every build
// sees the same swings; ratio is the second build's CPU over the first's.
// It is how an SDK or toolchain change is measured (docs/BENCHMARKS.md,
// "Issue 26, session 15"):
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -o /tmp/a.wasm ./tools-src/text   # one build, then the other as /tmp/b.wasm
//	TOOLHOST_BENCH_AB=/tmp/a.wasm,/tmp/b.wasm go test -run '^$' -bench FreshAB -benchtime 2000x ./host
func BenchmarkFreshAB(b *testing.B) {
	env := os.Getenv("TOOLHOST_BENCH_AB")
	if env == "" {
		b.Skip("TOOLHOST_BENCH_AB names no modules")
	}
	paths := strings.Split(env, ",")
	ctx := context.Background()
	args := []byte(`{"text":"the cat and the hat"}`)
	for _, reuse := range []bool{false, true} {
		name := "fresh"
		if reuse {
			name = "reuse"
		}
		b.Run(name, func(b *testing.B) {
			rt := newRuntime(b, host.Config{Reuse: host.Reuse{MaxUses: 1 << 30}})
			mods := make([]*host.Module, len(paths))
			for i, p := range paths {
				m, err := rt.LoadFile(ctx, p)
				if err != nil {
					b.Fatal(err)
				}
				mods[i] = m
			}
			cpu := alternate(b, mods, func(m *host.Module) error {
				res, err := m.Do(ctx, host.Request{Tool: "text.count", Args: args, Caller: "bench", Reuse: reuse})
				if err != nil || !bytes.Contains(res, []byte(`"words":5`)) {
					return fmt.Errorf("%s: call = %s, %v", m.Path, res, err)
				}
				return nil
			})
			for i := range mods {
				b.ReportMetric(float64(cpu[i])/float64(time.Microsecond)/float64(b.N), fmt.Sprintf("cpu-µs/op-%d", i))
			}
			if len(mods) > 1 {
				b.ReportMetric(float64(cpu[1])/float64(cpu[0]), "ratio")
			}
		})
	}
}

// BenchmarkFreshDataWrites puts two copies of tools-src/text side by
// side, call by call, fresh: the first's pool clears all of a reused
// buffer, as before it knew which bytes the data segments write; the
// second's leaves those bytes to the instantiation. ratio is the second's
// CPU over the first's.
func BenchmarkFreshDataWrites(b *testing.B) {
	ctx := context.Background()
	src := testwasm.Go(b, "./tools-src/text")
	wasm, err := os.ReadFile(src)
	if err != nil {
		b.Fatal(err)
	}
	rt := newRuntime(b, host.Config{})
	mods := make([]*host.Module, 2)
	for i := range mods {
		p := filepath.Join(b.TempDir(), "text.wasm")
		if err := os.WriteFile(p, wasm, 0o600); err != nil {
			b.Fatal(err)
		}
		if mods[i], err = rt.LoadFile(ctx, p); err != nil {
			b.Fatal(err)
		}
	}
	mods[0].ForgetDataWrites()
	args := []byte(`{"text":"the cat and the hat"}`)
	cpu := alternate(b, mods, func(m *host.Module) error {
		res, err := m.Call(ctx, "text.count", args, host.Limits{})
		if err != nil || !bytes.Contains(res, []byte(`"words":5`)) {
			return fmt.Errorf("call = %s, %v", res, err)
		}
		return nil
	})
	b.ReportMetric(float64(cpu[0])/float64(time.Microsecond)/float64(b.N), "cpu-µs/op-clear-all")
	b.ReportMetric(float64(cpu[1])/float64(time.Microsecond)/float64(b.N), "cpu-µs/op-data-left")
	b.ReportMetric(float64(cpu[1])/float64(cpu[0]), "ratio")
}
