//go:build unix

package host_test

import (
	"context"
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/toolhost/toolhost/dispatcher"
	"github.com/toolhost/toolhost/host"
	"github.com/toolhost/toolhost/internal/testkit/testwasm"
	"github.com/toolhost/toolhost/third_party/wazero"
	"github.com/toolhost/toolhost/third_party/wazero/api"
)

// BenchmarkReuse is one call in a warm instance against the floor: the
// same steps in a live instance through plain wazero (raw-warm: alloc and
// write the name and arguments, toolhost_call, read; no instantiation),
// beside the same call in a fresh instance. reuse is Module.Do for one
// caller with Reuse (a context without a deadline, as raw-warm's), with
// the default bounds (reuse) and with no use limit (reuse-steady);
// raw-warm-deadline is the floor with a deadline; dispatcher+reuse adds the registry record, schema
// validation and the dispatcher's policies. Run the arms interleaved
// (-count rounds each run all of them) and compare with benchstat.
func BenchmarkReuse(b *testing.B) {
	ctx := context.Background()
	rt := newRuntime(b, host.Config{})
	// Instances never retired for their use count: the steady state
	// between two retirements, without the fresh instance that replaces
	// one every MaxUses (1,000) calls amortized into each call.
	steady := newRuntime(b, host.Config{Reuse: host.Reuse{MaxUses: 1 << 30}})
	raw := newRawRuntime(b)
	for _, g := range []struct {
		name, path, tool, args, want string
	}{
		{"go-text.count", testwasm.Go(b, "./tools-src/text"), "text.count",
			`{"text":"the cat and the hat"}`, `{"words":5,"lines":1,"runes":19,"bytes":19}`},
		{"c-wordfreq.top", testwasm.C(b, "tools-src-c/wordfreq"), "wordfreq.top",
			`{"text":"the cat and the hat","top":1}`, `{"words":5,"unique":4,"top":[{"word":"the","count":2}]}`},
	} {
		m, err := rt.LoadFile(ctx, g.path)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { m.Close(ctx) })
		ms, err := steady.LoadFile(ctx, g.path)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { ms.Close(ctx) })
		args := []byte(g.args)
		run := func(arm string, call func() ([]byte, error), want string) {
			b.Run(arm+"-"+g.name, func(b *testing.B) {
				// Outside the loop: the caller's first call, which makes
				// its warm instance (and the spare).
				if _, err := call(); err != nil {
					b.Fatal(err)
				}
				// Nothing of the arms before (their background warming,
				// the loading's garbage) runs into this one's timing.
				m.WaitWarming()
				ms.WaitWarming()
				runtime.GC()
				b.ReportAllocs()
				cpu := processCPU()
				for b.Loop() {
					res, err := call()
					if err != nil || string(res) != want {
						b.Fatalf("call = %s, %v; want %s", res, err, want)
					}
				}
				// On a shared machine the process's CPU time per call
				// varies far less than the wall clock's time.
				b.ReportMetric(float64(processCPU()-cpu)/float64(b.N), "cpu-ns/op")
			})
		}
		live := newRawWarm(b, raw, raw.compile(b, g.path))
		run("raw-warm", func() ([]byte, error) { return rawWarmCall(ctx, live, g.tool, args) }, `{"result":`+g.want+`}`)
		// With a deadline, as every dispatched call has: wazero then
		// watches the context in a goroutine per exported call (three per
		// tool call) to stop the guest at the deadline.
		run("raw-warm-deadline", func() ([]byte, error) {
			dctx, cancel := context.WithTimeout(ctx, time.Minute)
			defer cancel()
			return rawWarmCall(dctx, live, g.tool, args)
		}, `{"result":`+g.want+`}`)
		run("reuse-steady", func() ([]byte, error) {
			return ms.Do(ctx, host.Request{Tool: g.tool, Args: args, Caller: "bench", Reuse: true})
		}, g.want)
		run("reuse", func() ([]byte, error) {
			return m.Do(ctx, host.Request{Tool: g.tool, Args: args, Caller: "bench", Reuse: true})
		}, g.want)
		d := dispatcherFor(b, m, g.tool)
		run("dispatcher+reuse", func() ([]byte, error) {
			return d.Call(ctx, dispatcher.Call{Tool: g.tool, Args: args, Options: dispatcher.Options{Caller: "bench"}})
		}, g.want)
		run("fresh", func() ([]byte, error) { return m.Call(ctx, g.tool, args, host.Limits{}) }, g.want)
	}
}

// rawWarm is one live instance through plain wazero, with its exports
// looked up once (wazero makes a new function, with its own stack, at each
// lookup): the floor of a call in a warm instance.
type rawWarm struct {
	mod         api.Module
	alloc, call api.Function
}

func newRawWarm(b testing.TB, r *rawRuntime, c wazero.CompiledModule) *rawWarm {
	b.Helper()
	mod, err := r.rt.InstantiateModule(context.Background(), c, r.cfg)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { mod.Close(context.Background()) })
	return &rawWarm{mod: mod, alloc: mod.ExportedFunction("toolhost_alloc"), call: mod.ExportedFunction("toolhost_call")}
}

// rawWarmCall is one toolhost_call into w: rawRuntime.call without the
// instantiation.
func rawWarmCall(ctx context.Context, w *rawWarm, tool string, args []byte) ([]byte, error) {
	mod, alloc := w.mod, w.alloc
	write := func(b []byte) (uint32, error) {
		res, err := alloc.Call(ctx, uint64(len(b)))
		if err != nil {
			return 0, err
		}
		if !mod.Memory().Write(uint32(res[0]), b) {
			return 0, fmt.Errorf("alloc out of range")
		}
		return uint32(res[0]), nil
	}
	namePtr, err := write([]byte(tool))
	if err != nil {
		return nil, err
	}
	argsPtr, err := write(args)
	if err != nil {
		return nil, err
	}
	res, err := w.call.Call(ctx, uint64(namePtr), uint64(len(tool)), uint64(argsPtr), uint64(len(args)))
	if err != nil {
		return nil, err
	}
	return readPacked(mod.Memory(), res[0])
}
