package host_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/toolhost/toolhost/host"
	"github.com/toolhost/toolhost/internal/testkit/testwasm"
)

// Fixtures, built once per test binary by TestMain (the go build cache and
// wat2wasm make repeats cheap).
var (
	// misbehavePath is testdata/misbehave built as a reactor.
	misbehavePath string
	// watPaths maps "echo" to the assembled testdata/wat/echo.wat.
	watPaths = map[string]string{}
	// cacheDir is the compilation cache every test runtime shares. It
	// lives beside the built fixtures and outlives the run: compiling the
	// Go fixture takes about 1 s, but about 15 s under -race, where
	// wazero's compiler itself is instrumented. Tests of the cold path
	// (TestCompilationCache, BenchmarkCompile) use fresh folders of their
	// own.
	cacheDir string
)

func TestMain(m *testing.M) {
	if os.Getenv(host.CompileChildEnv) == "1" {
		// The test binary is the compiler child of the compile-limit tests.
		os.Exit(host.CompileChildMain(os.Stdin, os.Stderr))
	}
	os.Exit(run(m))
}

func run(m *testing.M) int {
	if err := buildFixtures(); err != nil {
		fmt.Fprintln(os.Stderr, "building fixtures:", err)
		return 2
	}
	cacheDir = filepath.Join(filepath.Dir(misbehavePath), "wazero-cache")
	code := m.Run()
	if shared.rt != nil {
		_ = shared.rt.Close(context.Background())
	}
	return code
}

// buildFixtures builds every fixture through internal/testkit/testwasm. TestMain
// has no testing.TB, so a small one turns testwasm's t.Fatal into an error.
func buildFixtures() (err error) {
	defer func() {
		if r := recover(); r != nil {
			if f, ok := r.(fixtureFailure); ok {
				err = f
				return
			}
			panic(r)
		}
	}()
	tb := mainTB{}
	wats, _ := filepath.Glob(filepath.Join("testdata", "wat", "*.wat"))
	if len(wats) == 0 {
		return fmt.Errorf("no testdata/wat/*.wat (run from the host folder)")
	}
	for _, w := range wats {
		name := strings.TrimSuffix(filepath.Base(w), ".wat")
		watPaths[name] = testwasm.WAT(tb, filepath.ToSlash(filepath.Join("host", w)))
	}
	misbehavePath = testwasm.Go(tb, "./host/testdata/misbehave")
	return nil
}

type fixtureFailure string

func (f fixtureFailure) Error() string { return string(f) }

// mainTB is the part of testing.TB that testwasm uses. The embedded nil
// interface supplies the rest (and testing.TB's private method); calling
// anything else panics, which is a bug in this file.
type mainTB struct{ testing.TB }

func (mainTB) Helper()                      {}
func (mainTB) Fatal(args ...any)            { panic(fixtureFailure(fmt.Sprint(args...))) }
func (mainTB) Fatalf(f string, args ...any) { panic(fixtureFailure(fmt.Sprintf(f, args...))) }

// shared is the Runtime most tests use, with the misbehave module and
// echo.wat loaded once.
var shared struct {
	once      sync.Once
	err       error
	rt        *host.Runtime
	misbehave *host.Module
	echo      *host.Module
}

func sharedRuntime(t testing.TB) (*host.Runtime, *host.Module, *host.Module) {
	t.Helper()
	shared.once.Do(func() {
		ctx := context.Background()
		shared.rt, shared.err = host.New(ctx, host.Config{CacheDir: cacheDir, Logger: quietLogger()})
		if shared.err != nil {
			return
		}
		shared.misbehave, shared.err = shared.rt.LoadFile(ctx, misbehavePath)
		if shared.err != nil {
			return
		}
		shared.echo, shared.err = shared.rt.LoadFile(ctx, watPath(t, "echo"))
	})
	if shared.err != nil {
		t.Fatalf("shared runtime: %v", shared.err)
	}
	return shared.rt, shared.misbehave, shared.echo
}

func watPath(t testing.TB, name string) string {
	t.Helper()
	p, ok := watPaths[name]
	if !ok {
		t.Fatalf("no fixture testdata/wat/%s.wat", name)
	}
	return p
}

// quietLogger drops guest output: the misbehaving tools print stack traces.
func quietLogger() *slog.Logger { return slog.New(slog.DiscardHandler) }

// newRuntime is a Runtime of the test's own, closed when the test ends.
func newRuntime(t testing.TB, cfg host.Config) *host.Runtime {
	t.Helper()
	if cfg.CacheDir == "" {
		cfg.CacheDir = cacheDir
	}
	if cfg.Logger == nil {
		cfg.Logger = quietLogger()
	}
	rt, err := host.New(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rt.Close(context.Background()) })
	return rt
}

// syncBuffer is a bytes.Buffer safe for the concurrent writes of a logger.
type syncBuffer struct {
	mu  sync.Mutex
	buf strings.Builder
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
