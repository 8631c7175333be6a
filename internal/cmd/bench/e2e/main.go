// Command e2e measures MCP Streamable HTTP end to end: the official Go SDK
// client calling text.count on `toolhost serve` (one arm per set of serve
// flags) and on a Go SDK server whose handler does the same work in plain Go
// (the transport floor). Every server is a child process started here; the
// arms run interleaved (A, B, A, B…) at each concurrency so that the
// machine's load drifts over all of them alike, and each round's ratio to
// the floor is taken against the floor's run in the same round.
//
// It is a harness, not part of the server: `make bench-e2e` runs it.
package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/toolhost/toolhost/internal/cmd/bench/proc"
)

func main() {
	if len(os.Args) > 2 && os.Args[1] == "floor" {
		if err := serveFloor(os.Args[2], len(os.Args) > 3 && os.Args[3] == "stateless"); err != nil {
			fmt.Fprintln(os.Stderr, "floor:", err)
			os.Exit(1)
		}
		return
	}
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "bench-e2e:", err)
		os.Exit(1)
	}
}

func run() error {
	bin := flag.String("toolhost", "bin/toolhost", "the toolhost binary")
	wasm := flag.String("module", "plugins/text.wasm", "the module serving text.count")
	arms := flag.String("arms", "fresh", `comma-separated toolhost arms: "fresh" (serve --reuse=never), "snapshot" (fresh, with [modules."M.wasm"] snapshot = true) or "reuse" (serve --reuse=auto: text.count declares reuse)`)
	levels := flag.String("c", "1,8,32", "comma-separated concurrency levels")
	dur := flag.Duration("d", 3*time.Second, "how long each arm runs per round")
	rounds := flag.Int("rounds", 3, "interleaved rounds per concurrency")
	raw := flag.String("raw", "", "also write every round in Go benchmark format to this file (for benchstat)")
	flag.StringVar(&clientVersion, "protocol", "", `the MCP revision the client asks for ("": the SDK client's own choice; toolhost serves 2026-07-28 statelessly, a request per short-lived session, and the floor with a session; 2025-11-25 gives both a session)`)
	floorStateless := flag.Bool("floor-stateless", false, "serve the floor statelessly (a short-lived session per request), as toolhost serves 2026-07-28")
	compare := flag.String("compare", "", `another toolhost binary: each arm also runs on it, as "ARM@base", in the same rounds (A/B of two builds, interleaved)`)
	serverProcs := flag.Int("server-procs", 0, "GOMAXPROCS for the floor and every toolhost server (0: Go's default, one per CPU); the harness keeps its own. With 1, rounds at one caller vary far less (docs/BENCHMARKS.md, \"Issue 26, session 17\")")
	flag.Parse()

	if *serverProcs < 0 {
		return fmt.Errorf("-server-procs %d: want 0 or more", *serverProcs)
	}
	if *serverProcs > 0 {
		// The servers inherit the environment; this process read its
		// own GOMAXPROCS when it started, so it keeps it.
		if err := os.Setenv("GOMAXPROCS", strconv.Itoa(*serverProcs)); err != nil {
			return err
		}
	}
	cs, err := parseLevels(*levels)
	if err != nil {
		return err
	}
	plugins, err := os.MkdirTemp("", "bench-e2e-plugins-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(plugins)
	if err := copyFile(*wasm, filepath.Join(plugins, filepath.Base(*wasm))); err != nil {
		return err
	}

	var servers []*proc.Child
	defer func() {
		for _, s := range servers {
			s.Stop()
		}
	}()
	self, err := os.Executable()
	if err != nil {
		return err
	}
	floor, err := startFloor(self, *floorStateless)
	if err != nil {
		return err
	}
	servers = append(servers, floor)
	for _, arm := range strings.Split(*arms, ",") {
		args := []string{"serve", "--addr", "127.0.0.1:0", "--plugins", plugins, "--max-calls-per-caller", "1024"}
		switch arm {
		case "fresh":
			args = append(args, "--reuse=never")
		case "reuse":
			args = append(args, "--reuse=auto")
		case "snapshot":
			conf, err := snapshotConfig(plugins, filepath.Base(*wasm))
			if err != nil {
				return err
			}
			defer os.Remove(conf)
			args = append(args, "--reuse=never", "--config", conf)
		default:
			return fmt.Errorf("unknown arm %q (want fresh, snapshot or reuse)", arm)
		}
		s, err := proc.StartToolhost(arm, *bin, args)
		if err != nil {
			return err
		}
		servers = append(servers, s)
		if *compare != "" {
			b, err := proc.StartToolhost(arm+"@base", *compare, args)
			if err != nil {
				return err
			}
			servers = append(servers, b)
		}
	}

	var rawOut io.Writer = io.Discard
	if *raw != "" {
		f, err := os.Create(*raw)
		if err != nil {
			return err
		}
		defer f.Close()
		rawOut = f
	}
	ctx := context.Background()
	if err := settle(ctx, servers); err != nil {
		return err
	}
	if *serverProcs > 0 {
		fmt.Printf("servers at GOMAXPROCS=%d\n", *serverProcs)
	}
	fmt.Printf("load before: %s", loadavg())
	res := newResults()
	for _, c := range cs {
		for r := 0; r < *rounds; r++ {
			for _, s := range servers {
				m, err := measureServer(ctx, s, c, *dur)
				if err != nil {
					return fmt.Errorf("%s at c=%d: %w", s.Name, c, err)
				}
				res.add(s.Name, c, r, m)
				fmt.Fprintf(rawOut, "BenchmarkE2E/%s/c=%d \t%d\t%.0f ns/op\t%.1f calls/s\t%.0f p50-µs\t%.0f p99-µs\t%.0f server-cpu-µs/op\n",
					s.Name, c, m.calls, float64(m.elapsed.Nanoseconds())/float64(m.calls), m.rate(),
					us(m.pct(0.50)), us(m.pct(0.99)), us(m.cpuPerCall()))
				fmt.Fprintf(os.Stderr, "round %d c=%d %-6s %8.1f calls/s\n", r+1, c, s.Name, m.rate())
			}
		}
	}
	fmt.Printf("load after:  %s", loadavg())
	res.print(os.Stdout, servers, cs)
	return nil
}

// settle waits until no toolhost server is still compiling (its /readyz
// says so), then runs every server for a moment untimed. Without it the
// first round measured the servers' background compiles and the floor's
// first garbage collections: its ratios were 2.6× or 0.5× where the later
// rounds agreed.
func settle(ctx context.Context, servers []*proc.Child) error {
	for _, s := range servers {
		if s.Name == "floor" {
			continue
		}
		// /readyz names the modules compiling or queued to while there are any.
		idle := func(status int, body []byte) bool {
			return status == http.StatusOK && !bytes.Contains(body, []byte("compiling"))
		}
		if err := waitHTTP(strings.TrimSuffix(s.URL, "/mcp")+"/readyz", 5*time.Minute, idle); err != nil {
			return fmt.Errorf("%s is still compiling: %w", s.Name, err)
		}
	}
	for _, s := range servers {
		if _, err := measure(ctx, s.URL, 1, time.Second); err != nil {
			return fmt.Errorf("%s, warming up: %w", s.Name, err)
		}
	}
	return nil
}

// measureServer is measure, with the CPU time the server process used
// meanwhile (zero where /proc cannot say).
func measureServer(ctx context.Context, s *proc.Child, c int, d time.Duration) (sample, error) {
	before, errBefore := s.CPU()
	m, err := measure(ctx, s.URL, c, d)
	if after, errAfter := s.CPU(); err == nil && errBefore == nil && errAfter == nil {
		m.cpu = after - before
	}
	return m, err
}

// snapshotConfig writes, beside the plugins folder dir, a config that
// starts module's instances from its snapshot, and returns its path.
func snapshotConfig(dir, module string) (string, error) {
	path := dir + "-snapshot.toml"
	return path, os.WriteFile(path, fmt.Appendf(nil, "[modules.%q]\nsnapshot = true\n", module), 0o644)
}

func us(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }

func parseLevels(s string) ([]int, error) {
	var cs []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			return nil, fmt.Errorf("bad concurrency %q", f)
		}
		cs = append(cs, n)
	}
	return cs, nil
}

func copyFile(from, to string) error {
	b, err := os.ReadFile(from)
	if err != nil {
		return fmt.Errorf("%w (run `make plugins` first)", err)
	}
	return os.WriteFile(to, b, 0o644)
}

func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown\n"
	}
	return string(b)
}

// freeAddr picks a loopback port for the floor server.
func freeAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}

// waitHTTP polls url until its answer is ready (nil: any answer), or
// limit has passed.
func waitHTTP(url string, limit time.Duration, ready func(status int, body []byte) bool) error {
	deadline := time.Now().Add(limit)
	for {
		resp, err := http.Get(url)
		if err == nil {
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if ready == nil || ready(resp.StatusCode, body) {
				return nil
			}
			err = fmt.Errorf("%s answered %d: %.200s", url, resp.StatusCode, body)
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("after %v: %w", limit, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func startFloor(self string, stateless bool) (*proc.Child, error) {
	addr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	args := []string{"floor", addr}
	if stateless {
		args = append(args, "stateless")
	}
	cmd := exec.Command(self, args...)
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	c := &proc.Child{Name: "floor", Cmd: cmd, URL: "http://" + addr + "/mcp"}
	if err := waitHTTP(c.URL, 30*time.Second, nil); err != nil {
		c.Stop()
		return nil, fmt.Errorf("floor server did not start: %w", err)
	}
	return c, nil
}
