package reliability_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/toolhost/toolhost/dispatcher"
	"github.com/toolhost/toolhost/host"
	"github.com/toolhost/toolhost/internal/testkit/testwasm"
	"github.com/toolhost/toolhost/loader"
	"go.uber.org/goleak"
)

// heapTolerance is how far HeapInuse may end above its baseline after a
// hostile case, once everything the case built is closed and collected.
// Every hostile case allocates tens of megabytes or more (a 64 MiB guest
// memory, a 50 MB response, 10,000 compiled schemas); a leak of any of them
// would be far over this. What is left is the runtime's own noise: span
// and size-class rounding, test log buffers, the testing package's state.
const heapTolerance = 4 << 20

// cacheDir is the compilation cache the suite shares with the end-to-end
// tests, so the Go fixtures compile once per machine, not once per run.
var cacheDir = filepath.Join(os.TempDir(), "toolhost-test-cache")

// fixture paths, built on demand and shared by the whole test binary.
func echoWASM(t testing.TB) string      { return testwasm.WAT(t, "host/testdata/wat/echo.wat") }
func misbehaveWASM(t testing.TB) string { return testwasm.Go(t, "./host/testdata/misbehave") }
func guestWASM(t testing.TB) string     { return testwasm.Go(t, "./reliability/testdata/guest") }
func hostWAT(t testing.TB, name string) string {
	return testwasm.WAT(t, "host/testdata/wat/"+name+".wat")
}
func ourWAT(t testing.TB, name string) string {
	return testwasm.WAT(t, "reliability/testdata/wat/"+name+".wat")
}

// rig is the stack a server runs, without the network: a runtime, a live
// plugins folder holding echo.wat, and a dispatcher over it. A hostile
// module is added to the folder and picked up by a rescan, as a hot reload
// would.
type rig struct {
	t    testing.TB
	rt   *host.Runtime
	dir  string
	live *loader.Live
	d    *dispatcher.Dispatcher
	logs *syncBuffer
	log  *slog.Logger
}

// rigConfig tunes a rig; the zero value is the server's defaults, except
// a 500 ms describe timeout (so a describe loop costs half a second).
type rigConfig struct {
	Limits          host.Limits
	DescribeTimeout time.Duration
}

func newRig(t testing.TB, cfg rigConfig) *rig {
	t.Helper()
	if cfg.DescribeTimeout == 0 {
		cfg.DescribeTimeout = 500 * time.Millisecond
	}
	logs := &syncBuffer{}
	logger := slog.New(slog.NewJSONHandler(logs, nil))
	ctx := context.Background()
	rt, err := host.New(ctx, host.Config{CacheDir: cacheDir, Limits: cfg.Limits, DescribeTimeout: cfg.DescribeTimeout, Logger: logger})
	if err != nil {
		t.Fatal(err)
	}
	dir := testwasm.Dir(t, echoWASM(t))
	live, err := loader.Open(ctx, rt, dir, loader.Options{}, logger)
	if err != nil {
		t.Fatal(err)
	}
	r := &rig{t: t, rt: rt, dir: dir, live: live, logs: logs, log: logger,
		d: dispatcher.New(live, dispatcher.Config{})}
	r.stillServes()
	return r
}

func (r *rig) logger() *slog.Logger { return r.log }

// add copies a module into the plugins folder under name and rescans.
func (r *rig) add(name, wasm string) *loader.Change {
	r.t.Helper()
	b, err := os.ReadFile(wasm)
	if err != nil {
		r.t.Fatal(err)
	}
	return r.addBytes(name, b)
}

func (r *rig) addBytes(name string, b []byte) *loader.Change {
	r.t.Helper()
	if err := os.WriteFile(filepath.Join(r.dir, name), b, 0o644); err != nil {
		r.t.Fatal(err)
	}
	ch, err := r.live.Rescan(context.Background())
	if err != nil {
		r.t.Fatal(err)
	}
	return ch
}

// mustLoad adds a module that must load.
func (r *rig) mustLoad(name, wasm string) {
	r.t.Helper()
	if ch := r.add(name, wasm); len(ch.Errors) > 0 || len(ch.Loaded) != 1 {
		r.t.Fatalf("loading %s: %+v, errors %v", name, ch, ch.Errors)
	}
}

// mustRefuse adds a module that must be refused; it returns the reason.
func (r *rig) mustRefuse(name string, b []byte) string {
	r.t.Helper()
	ch := r.addBytes(name, b)
	if len(ch.Errors) != 1 || len(ch.Loaded) != 0 {
		r.t.Fatalf("%s: change %+v; want one load error", name, ch)
	}
	return ch.Errors[0].Reason
}

// call dispatches one call, as transport would.
func (r *rig) call(tool, args string, opts dispatcher.Options) dispatcher.Outcome {
	return r.d.Do(context.Background(), dispatcher.Call{Tool: tool, Args: json.RawMessage(args), Options: opts})
}

// fails checks that o failed with kind and a message containing want.
func (r *rig) fails(o dispatcher.Outcome, kind dispatcher.Kind, want string) {
	r.t.Helper()
	if o.Err == nil {
		r.t.Fatalf("succeeded with %.200s; want %s", o.Result, kind)
	}
	if o.Err.Kind != kind || !bytes.Contains([]byte(o.Err.Message), []byte(want)) {
		r.t.Fatalf("got %s: %.300s; want %s containing %q", o.Err.Kind, o.Err.Message, kind, want)
	}
	r.t.Logf("%s (attempts %d): %.300s", o.Err.Kind, o.Err.Attempts, o.Err.Message)
}

// stillServes is the good call right after a hostile one: the folder's
// well-behaved module answers, through the same dispatcher.
func (r *rig) stillServes() {
	r.t.Helper()
	o := r.call("wat.echo", `{"still":"serving"}`, dispatcher.Options{})
	if o.Err != nil || string(o.Result) != `{"still":"serving"}` {
		r.t.Fatalf("good call after a hostile one: %s, %v", o.Result, o.Err)
	}
}

func (r *rig) close() {
	r.live.Close()
	if err := r.rt.Close(context.Background()); err != nil {
		r.t.Errorf("closing the runtime: %v", err)
	}
}

// hostile runs one hostile case in a rig of its own and checks that the
// process gets back to where it was: the case's goroutines end (goleak)
// and the heap in use returns to within heapTolerance of its baseline. The
// rig is built and closed inside the measurement, so a leak anywhere in
// runtime, loader, registry or dispatcher shows.
func hostile(t *testing.T, cfg rigConfig, run func(r *rig)) {
	t.Helper()
	warmUp(t)
	ignore := goleak.IgnoreCurrent()
	before := heapInuse()
	func() {
		r := newRig(t, cfg)
		defer r.close()
		run(r)
		r.stillServes()
	}()
	if t.Failed() {
		return
	}
	goleak.VerifyNone(t, ignore)
	after := heapInuse()
	t.Logf("heap in use: baseline %s, after %s (%+d KiB); goroutines %d", mib(before), mib(after),
		(int64(after)-int64(before))/1024, runtime.NumGoroutine())
	if after > before+heapTolerance {
		t.Errorf("heap in use grew from %s to %s, over the %s tolerance", mib(before), mib(after), mib(heapTolerance))
	}
}

// full reports whether the suite runs in full (`make reliability`, which
// sets TOOLHOST_RELIABILITY=full) rather than in the short form that
// `go test ./...` and CI run.
func full() bool { return os.Getenv("TOOLHOST_RELIABILITY") == "full" }

var warm sync.Once

// warmUp runs one rig through a call before any baseline is taken, so
// one-time allocations (the JSON Schema metaschema, wazero's and slog's
// package state, the fixtures' paths) are not charged to the first case.
func warmUp(t *testing.T) {
	warm.Do(func() {
		r := newRig(t, rigConfig{})
		r.close()
	})
}

// heapInuse collects garbage (twice: the first pass can only queue
// finalizers) and returns the bytes in in-use heap spans.
func heapInuse() uint64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapInuse
}

func mib(n uint64) string { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }

// syncBuffer is a strings.Builder safe for a logger's concurrent writes.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
