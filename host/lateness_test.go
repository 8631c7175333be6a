package host_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolhost/toolhost/host"
	"github.com/toolhost/toolhost/internal/testkit/testwasm"
)

// percentile of sorted ds (p in [0, 1]).
func percentile(ds []time.Duration, p float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	return ds[min(len(ds)-1, int(p*float64(len(ds))))]
}

// TestLatenessReport measures how late a call's error comes back after its
// deadline (make lateness; TOOLHOST_LATENESS=N calls per guest): a Go
// guest spinning on the CPU and one sleeping, and a WAT and a C guest
// recursing without a loop (stopped only by the termination check at
// function entries), each with a 50 ms timeout, one call at a time. It
// prints p50/p99/max; it asserts nothing (a measurement of the machine,
// not a gate) but that no call succeeds.
func TestLatenessReport(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("TOOLHOST_LATENESS"))
	if n <= 0 {
		t.Skip("a measurement: make lateness (TOOLHOST_LATENESS=calls)")
	}
	rt := newRuntime(t, host.Config{})
	load := func(path string) *host.Module {
		m, err := rt.LoadFile(context.Background(), path)
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	mb := load(misbehavePath)
	const timeout = 50 * time.Millisecond
	fmt.Printf("| guest | calls | p50 late | p99 late | max late |\n|---|---|---|---|---|\n")
	for _, c := range []struct {
		name string
		m    *host.Module
		tool string
		args string
	}{
		{"spin", mb, "spin", `{}`},
		{"sleep", mb, "sleep", `{"ms":10000}`},
		{"recurse (WAT)", load(watPath(t, "fib")), "wat.fib", `{"n":60}`},
		{"recurse (C)", load(testwasm.C(t, "host/testdata/cfib")), "c.fib", `{"n":60}`},
	} {
		late := make([]time.Duration, 0, n)
		for range n {
			ctx, cancel := context.WithTimeout(context.Background(), timeout)
			deadline, _ := ctx.Deadline()
			_, err := c.m.Call(ctx, c.tool, []byte(c.args), host.Limits{})
			late = append(late, time.Since(deadline))
			cancel()
			if err == nil {
				t.Fatalf("%s returned before its deadline", c.tool)
			}
		}
		printLateness(c.name, late)
	}
	printLateness("(Go floor: no guest)", goTimerLateness(n, timeout))
}

func printLateness(name string, late []time.Duration) {
	slices.Sort(late)
	fmt.Printf("| %s | %d | %v | %v | %v |\n", name, len(late), percentile(late, 0.5).Round(10*time.Microsecond),
		percentile(late, 0.99).Round(10*time.Microsecond), late[len(late)-1].Round(10*time.Microsecond))
}

// goTimerLateness is the floor the Go runtime sets: how late n contexts'
// AfterFuncs run after their deadline while the goroutine that made each
// context computes, as a spinning guest's does, with no wazero at all.
func goTimerLateness(n int, timeout time.Duration) []time.Duration {
	late := make([]time.Duration, 0, n)
	for range n {
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		deadline, _ := ctx.Deadline()
		var fired atomic.Int64
		context.AfterFunc(ctx, func() { fired.Store(time.Now().UnixNano()) })
		for fired.Load() == 0 {
		}
		late = append(late, time.Unix(0, fired.Load()).Sub(deadline))
		cancel()
	}
	return late
}

// TestOverloadReport saturates the CPU with calls to a Go guest
// (make overload; TOOLHOST_OVERLOAD=callers in flight): every caller calls
// a tool that sleeps 1 ms, in a loop for 10 s under a 10 s timeout, with
// at most TOOLHOST_OVERLOAD_FRESH fresh instances at once (0: no bound;
// unset: GOMAXPROCS). It prints one row: latency, and the process's peak
// RSS (VmHWM: one arm per process, so the figure is the arm's own). It
// asserts nothing.
func TestOverloadReport(t *testing.T) {
	workers, _ := strconv.Atoi(os.Getenv("TOOLHOST_OVERLOAD"))
	if workers <= 0 {
		t.Skip("a measurement: make overload (TOOLHOST_OVERLOAD=callers)")
	}
	maxFresh := runtime.GOMAXPROCS(0)
	if v := os.Getenv("TOOLHOST_OVERLOAD_FRESH"); v != "" {
		maxFresh, _ = strconv.Atoi(v)
	}
	const dur = 10 * time.Second
	rt := newRuntime(t, host.Config{MaxFresh: maxFresh})
	m, err := rt.LoadFile(context.Background(), misbehavePath)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var lat []time.Duration
	var calls, ok atomic.Int64
	end := time.Now().Add(dur)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for time.Now().Before(end) {
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				start := time.Now()
				_, err := m.Call(ctx, "sleep", []byte(`{"ms":1}`), host.Limits{})
				d := time.Since(start)
				cancel()
				calls.Add(1)
				if err == nil {
					ok.Add(1)
				}
				mu.Lock()
				lat = append(lat, d)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	slices.Sort(lat)
	fmt.Printf("| %d | %d | %d | %d | %v | %v | %d |\n", maxFresh, workers, calls.Load(), ok.Load(),
		percentile(lat, 0.5).Round(time.Millisecond), percentile(lat, 0.99).Round(time.Millisecond), procStatusKiB("VmHWM:")/1024)
}

// procStatusKiB is a field of /proc/self/status in KiB (0 elsewhere).
func procStatusKiB(field string) int64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), field); ok {
			v, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return v
		}
	}
	return 0
}
