// Command mem prints toolhost's memory table (docs/BENCHMARKS.md): the
// resident memory each call in flight adds (one arm per set of serve
// flags: fresh is --reuse=never, reuse is --reuse=auto), and the readiness
// time and resident memory of a server with 20 modules, from a cold and from a
// warm compilation cache, eager and lazy: at ready and once every module's
// code is resident and the server idle. Every server is a `toolhost serve` child
// process; its memory is VmRSS from /proc (Linux only).
//
// It is a harness, not part of the server: `make bench-mem` runs it.
package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolhost/toolhost/internal/cmd/bench/proc"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "bench-mem:", err)
		os.Exit(1)
	}
}

type config struct {
	bin     string
	arms    []string
	levels  []int
	modules int
	modes   []string // eager, lazy: how serve loads the readiness rows' modules
	idle    time.Duration
	// calledIdle, when positive, adds the called-then-idle row.
	calledIdle time.Duration
	hold       time.Duration
	dir        string
	config     string // a TOML file lifting the concurrency caps
}

func run() error {
	var c config
	flag.StringVar(&c.bin, "toolhost", "bin/toolhost", "the toolhost binary")
	arms := flag.String("arms", "fresh", `comma-separated arms: "fresh" (serve --reuse=never) or "reuse" (serve --reuse=auto)`)
	levels := flag.String("n", "8,32", "comma-separated numbers of calls in flight")
	flag.IntVar(&c.modules, "modules", 20, "modules for the readiness rows")
	modes := flag.String("modes", "eager,lazy", `comma-separated load modes for the readiness rows: "eager" (serve --lazy=false: every module compiled and described before listening) or "lazy" (--lazy --warm-up: listed from the describe cache, compiled in the background)`)
	flag.DurationVar(&c.idle, "idle", 2*time.Second, "how long a server stays idle, once every module's code is resident, before its idle RSS is read (serve returns loading's freed heap 250 ms after the last load)")
	flag.DurationVar(&c.calledIdle, "called-idle", 0, "if positive: also call every module once in a server of the first mode and read its RSS this long after (past 2 minutes, its warm instances have retired and its pooled memory is dropped)")
	flag.DurationVar(&c.hold, "hold", 20*time.Second, "how long each held call sleeps (longer than it takes to start them all)")
	flag.Parse()
	c.arms = strings.Split(*arms, ",")
	c.modes = strings.Split(*modes, ",")
	for _, f := range strings.Split(*levels, ",") {
		n, err := strconv.Atoi(f)
		if err != nil || n < 1 {
			return fmt.Errorf("bad -n %q", f)
		}
		c.levels = append(c.levels, n)
	}
	dir, err := os.MkdirTemp("", "bench-mem-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	c.dir = dir

	fmt.Fprintf(os.Stderr, "building %d modules\n", c.modules)
	if err := buildModules(filepath.Join(dir, "plugins"), c.modules); err != nil {
		return err
	}
	// serve's default caps a tool at 8 executions in flight; the rows
	// need up to the largest -n running at once.
	conf := filepath.Join(dir, "toolhost.toml")
	top := slices.Max(c.levels)
	if err := os.WriteFile(conf, fmt.Appendf(nil, "[dispatch]\nconcurrency = %d\nglobal_concurrency = %d\n", top, top), 0o644); err != nil {
		return err
	}
	c.config = conf
	one := filepath.Join(dir, "one")
	if err := os.MkdirAll(one, 0o755); err != nil {
		return err
	}
	if err := os.Link(filepath.Join(dir, "plugins", "m0.wasm"), filepath.Join(one, "m0.wasm")); err != nil {
		return err
	}
	fmt.Printf("load before: %s", loadavg())
	ready, err := readiness(c, one)
	if err != nil {
		return err
	}
	var called string
	if c.calledIdle > 0 {
		if called, err = calledIdle(c); err != nil {
			return err
		}
	}
	flight, err := inFlight(c, one)
	if err != nil {
		return err
	}
	fmt.Printf("load after:  %s\n", loadavg())
	fmt.Print(ready, "\n", called, "\n", flight)
	return nil
}

// buildModules builds memtool n times, with tools m0.* … m(n-1).*, into dir.
func buildModules(dir string, n int) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	dir, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	for i := range n {
		// memtool is a module of its own (it builds from the guest SDK's
		// module), so it is built from its folder.
		cmd := exec.Command("go", "build", "-buildmode=c-shared", "-ldflags", fmt.Sprintf("-X main.prefix=m%d", i),
			"-o", filepath.Join(dir, fmt.Sprintf("m%d.wasm", i)), ".")
		cmd.Dir = filepath.Join("internal", "cmd", "bench", "memtool")
		cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm")
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("building memtool: %v\n%s", err, out)
		}
	}
	return nil
}

func mib(b int64) string { return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20)) }

// readiness starts serve on the 20 modules with an empty cache folder
// (cold), then, in each mode, again on the same folder (warm) and on one
// module (warm) for the base a module adds to. Each row has the time to
// the "serving MCP" line (every tool listed; with --lazy the server
// listens earlier) and VmRSS then, the time until every module's code is
// resident (serve's /readyz no longer reports modules compiling or queued
// to: at once when eager, after the background warm-up when lazy), and
// VmRSS once the server has then been idle for c.idle: what a loaded,
// idle module costs.
func readiness(c config, one string) (string, error) {
	var out strings.Builder
	out.WriteString("| modules | cache | mode | ready in | RSS at ready | code resident in | RSS idle | RSS idle per module |\n|---|---|---|---|---|---|---|---|\n")
	cache := filepath.Join(c.dir, "cache")
	type row struct {
		plugins, cache, mode string
		modules              int
	}
	rows := []row{{filepath.Join(c.dir, "plugins"), "cold", c.modes[0], c.modules}}
	for _, mode := range c.modes {
		rows = append(rows, row{filepath.Join(c.dir, "plugins"), "warm", mode, c.modules}, row{one, "warm", mode, 1})
	}
	base, warmAll := map[string]int64{}, map[string]int64{}
	for _, row := range rows {
		args := []string{"serve", "--addr", "127.0.0.1:0", "--plugins", row.plugins, "--cache-dir", cache}
		switch row.mode {
		case "eager":
			args = append(args, "--lazy=false")
		case "lazy":
			args = append(args, "--lazy=true", "--warm-up=true")
		default:
			return "", fmt.Errorf("unknown mode %q", row.mode)
		}
		r, err := startIdle(c, row.cache, args)
		if err != nil {
			return "", err
		}
		switch {
		case row.modules == 1:
			base[row.mode] = r.idle
		case row.cache == "warm":
			warmAll[row.mode] = r.idle
		}
		fmt.Fprintf(&out, "| %d | %s | %s | %s | %s | %s | %s | %s |\n", row.modules, row.cache, row.mode,
			r.ready.Round(time.Millisecond), mib(r.atReady), r.resident.Round(time.Millisecond), mib(r.idle), mib(r.idle/int64(row.modules)))
		fmt.Fprintf(os.Stderr, "%d modules, %s cache, %s: ready in %s (%s), resident in %s, idle %s\n", row.modules, row.cache, row.mode,
			r.ready, mib(r.atReady), r.resident, mib(r.idle))
	}
	if c.modules > 1 {
		for _, mode := range c.modes {
			fmt.Fprintf(&out, "\n%s, warm: a server with 1 module holds %s idle; each of the other %d modules adds %s.\n",
				mode, mib(base[mode]), c.modules-1, mib((warmAll[mode]-base[mode])/int64(c.modules-1)))
		}
	}
	return out.String(), nil
}

// idleRow is one server's readiness and memory.
type idleRow struct {
	ready, resident time.Duration // from the start
	atReady, idle   int64         // VmRSS
}

// startIdle starts serve with args, reads VmRSS when it listens, waits for
// every module's code to be resident, then c.idle more, reads VmRSS again
// and stops it.
func startIdle(c config, name string, args []string) (idleRow, error) {
	start := time.Now()
	s, err := proc.StartToolhost(name, c.bin, args)
	if err != nil {
		return idleRow{}, err
	}
	defer s.Stop()
	r := idleRow{ready: s.Ready}
	if r.atReady, err = s.RSS(); err != nil {
		return r, err
	}
	if err := waitResident(s, start); err != nil {
		return r, err
	}
	r.resident = time.Since(start)
	time.Sleep(c.idle)
	r.idle, err = s.RSS()
	return r, err
}

// waitResident waits until serve's /readyz no longer reports modules
// compiling or queued to: every module's code is resident.
func waitResident(s *proc.Child, start time.Time) error {
	readyz := strings.TrimSuffix(s.URL, "/mcp") + "/readyz"
	for {
		busy, err := compiling(readyz)
		if err != nil {
			return err
		}
		if !busy {
			return nil
		}
		if time.Since(start) > 5*time.Minute {
			return fmt.Errorf("%s: modules still compiling after 5 minutes", s.Name)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// compiling reports whether serve's /readyz says modules are compiling or
// queued to (server's readyNote).
func compiling(url string) (bool, error) {
	resp, err := http.Get(url)
	if err != nil {
		return false, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return false, err
	}
	return strings.Contains(string(b), "compiling"), nil
}

// calledIdle starts serve on the modules in the first mode, calls every
// module's count tool once when its code is resident, and reads VmRSS
// c.idle after the calls and again c.calledIdle after them: what a module
// that was called and is idle again costs, once its warm instances have
// retired (60 s) and its pooled memory has been dropped (60 s after that).
func calledIdle(c config) (string, error) {
	args := []string{"serve", "--addr", "127.0.0.1:0", "--plugins", filepath.Join(c.dir, "plugins"),
		"--cache-dir", filepath.Join(c.dir, "cache"), "--lazy=" + strconv.FormatBool(c.modes[0] == "lazy")}
	start := time.Now()
	s, err := proc.StartToolhost("called", c.bin, args)
	if err != nil {
		return "", err
	}
	defer s.Stop()
	if err := waitResident(s, start); err != nil {
		return "", err
	}
	time.Sleep(c.idle)
	before, err := s.RSS()
	if err != nil {
		return "", err
	}
	ctx := context.Background()
	client := mcp.NewClient(&mcp.Implementation{Name: "bench-mem", Version: "bench"}, nil)
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: s.URL, DisableStandaloneSSE: true}, nil)
	if err != nil {
		return "", err
	}
	defer cs.Close()
	for i := range c.modules {
		if err := callOK(ctx, cs, fmt.Sprintf("m%d.count", i), map[string]any{"text": "one call each"}); err != nil {
			return "", err
		}
	}
	time.Sleep(c.idle)
	called, err := s.RSS()
	if err != nil {
		return "", err
	}
	time.Sleep(c.calledIdle - c.idle)
	later, err := s.RSS()
	if err != nil {
		return "", err
	}
	fmt.Fprintf(os.Stderr, "called once each: %s before, %s after, %s %s later\n", mib(before), mib(called), mib(later), c.calledIdle)
	return fmt.Sprintf("| modules | mode | RSS idle before the calls | %s after one call each | %s after |\n|---|---|---|---|---|\n| %d | %s | %s (%s per module) | %s (%s) | %s (%s) |\n",
		c.idle, c.calledIdle, c.modules, c.modes[0], mib(before), mib(before/int64(c.modules)), mib(called), mib(called/int64(c.modules)),
		mib(later), mib(later/int64(c.modules))), nil
}

// inFlight holds n calls of m0.hold in one server per arm and n, waits
// until the server's own gauge counts n instances running, and reads VmRSS
// against the same server's idle VmRSS after one call.
func inFlight(c config, one string) (string, error) {
	var out strings.Builder
	out.WriteString("| arm | calls in flight | RSS idle (after one call) | RSS with the calls in flight | per call in flight |\n|---|---|---|---|---|\n")
	for _, arm := range c.arms {
		for _, n := range c.levels {
			args := []string{"serve", "--addr", "127.0.0.1:0", "--plugins", one, "--cache-dir", filepath.Join(c.dir, "cache"),
				"--config", c.config, "--max-calls-per-caller", strconv.Itoa(2 * n),
				// Admission would hold fresh calls past 4 × GOMAXPROCS in
				// line, never all n in flight: this measures a call's
				// memory, not admission (make overload does).
				"--max-fresh", strconv.Itoa(2 * n)}
			switch arm {
			case "reuse":
				args = append(args, "--reuse=auto")
			case "fresh":
				args = append(args, "--reuse=never")
			default:
				return "", fmt.Errorf("unknown arm %q", arm)
			}
			s, err := proc.StartToolhost(arm, c.bin, args)
			if err != nil {
				return "", err
			}
			idle, busy, err := holdCalls(s, n, c.hold)
			s.Stop()
			if err != nil {
				return "", fmt.Errorf("%s n=%d: %w", arm, n, err)
			}
			fmt.Fprintf(&out, "| %s | %d | %s | %s | %s |\n", arm, n, mib(idle), mib(busy), mib((busy-idle)/int64(n)))
			fmt.Fprintf(os.Stderr, "%s n=%d: idle %s, busy %s\n", arm, n, mib(idle), mib(busy))
		}
	}
	return out.String(), nil
}

func holdCalls(s *proc.Child, n int, hold time.Duration) (idle, busy int64, err error) {
	ctx := context.Background()
	client := mcp.NewClient(&mcp.Implementation{Name: "bench-mem", Version: "bench"}, nil)
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: s.URL, DisableStandaloneSSE: true}, nil)
	if err != nil {
		return 0, 0, err
	}
	defer cs.Close()
	if err := callOK(ctx, cs, "m0.count", map[string]any{"text": "warm up"}); err != nil {
		return 0, 0, err
	}
	if idle, err = s.RSS(); err != nil {
		return 0, 0, err
	}
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- callOK(ctx, cs, "m0.hold", map[string]any{"ms": hold.Milliseconds()})
		}()
	}
	metricsURL := strings.TrimSuffix(s.URL, "/mcp") + "/metrics"
	deadline := time.Now().Add(hold)
	for {
		running, err := gauge(metricsURL, "toolhost_instances_in_flight")
		if err != nil {
			return 0, 0, err
		}
		if running >= n {
			break
		}
		if time.Now().After(deadline) {
			return 0, 0, fmt.Errorf("only %d of %d calls in flight after %s", running, n, hold)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if busy, err = s.RSS(); err != nil {
		return 0, 0, err
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			return 0, 0, err
		}
	}
	return idle, busy, nil
}

func callOK(ctx context.Context, cs *mcp.ClientSession, tool string, args map[string]any) error {
	r, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		return err
	}
	if r.IsError {
		return fmt.Errorf("%s: tool error: %v", tool, r.Content)
	}
	return nil
}

// gauge reads one unlabelled gauge from the Prometheus text at url.
func gauge(url, name string) (int, error) {
	resp, err := http.Get(url)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), name+" "); ok {
			f, err := strconv.ParseFloat(v, 64)
			return int(f), err
		}
	}
	return 0, fmt.Errorf("no %s at %s", name, url)
}

func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown\n"
	}
	return string(b)
}
