// Package storm reproduces the retry-storm experiment of docs/GOVERNOR.md:
// agents of mixed priorities share one upstream quota, calling it through a
// real toolhost tool with governed egress, once retrying on their own with
// exponential backoff and jitter (arm a) and once through the rate governor
// (arm b). Everything runs in this process and on loopback: the upstream is
// an httptest server, the tool a wasm module loaded into a host runtime.
package storm

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/netip"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/toolhost/toolhost/breaker"
	"github.com/toolhost/toolhost/dispatcher"
	"github.com/toolhost/toolhost/governor"
	"github.com/toolhost/toolhost/host"
	"github.com/toolhost/toolhost/imports/toolhostv1"
	"github.com/toolhost/toolhost/loader"
)

// Options shape a run. The zero value, with Module set, is the experiment
// of docs/GOVERNOR.md.
type Options struct {
	// Module is the egress test module (host/testdata/egress built as a
	// reactor); required.
	Module string
	// Rate and Burst are the upstream's quota, per second; 0 means 20 and 5.
	Rate, Burst int
	// Headroom is how many tokens below the upstream's burst the
	// governor's quota is set; 0 means 1, negative means none. The
	// governor grants at the upstream's own rate, but a request's delay
	// to the upstream varies: one that arrives a little early after one
	// that was late finds the upstream's bucket a fraction short. One
	// token of headroom absorbs up to one emission interval (50 ms at 20/s)
	// of such jitter at no cost in rate.
	Headroom int
	// Margin is the fraction of the upstream's rate the governor's quota
	// is set below; 0 means 0.05, negative means none. Headroom absorbs
	// one burst of delay jitter; the margin lets the upstream's bucket
	// gain slack over time (one token per second at 20/s), so that
	// jitter later in a run finds tokens there too.
	Margin float64
	// Interactive and Background are how many agents of each class; 0
	// means 3 and 6.
	Interactive, Background int
	// InteractiveCalls and BackgroundCalls are each agent's calls; 0 means
	// 20 and 40.
	InteractiveCalls, BackgroundCalls int
	// Think is an interactive agent's pause between calls; 0 means 500 ms.
	// Background agents call back to back.
	Think time.Duration
	// MaxDuration bounds each arm; calls not finished by then count as
	// failed. 0 means 60 s.
	MaxDuration time.Duration
	// CacheDir is wazero's compilation cache ("" is the host default).
	CacheDir string
	// Seed makes the agents' jitter repeatable; 0 means 1.
	Seed uint64
	// Progress receives a line per arm; nil means none.
	Progress io.Writer
}

func (o Options) withDefaults() Options {
	o.Rate = cmp.Or(o.Rate, 20)
	o.Burst = cmp.Or(o.Burst, 5)
	o.Headroom = cmp.Or(o.Headroom, 1)
	if o.Headroom < 0 || o.Headroom >= o.Burst {
		o.Headroom = 0
	}
	o.Margin = cmp.Or(o.Margin, 0.05)
	if o.Margin < 0 || o.Margin >= 1 {
		o.Margin = 0
	}
	o.Interactive = cmp.Or(o.Interactive, 3)
	o.Background = cmp.Or(o.Background, 6)
	o.InteractiveCalls = cmp.Or(o.InteractiveCalls, 20)
	o.BackgroundCalls = cmp.Or(o.BackgroundCalls, 40)
	o.Think = cmp.Or(o.Think, 500*time.Millisecond)
	o.MaxDuration = cmp.Or(o.MaxDuration, 60*time.Second)
	o.Seed = cmp.Or(o.Seed, 1)
	return o
}

// Run runs both arms, one after the other, each against a fresh upstream.
func Run(ctx context.Context, o Options) (*Report, error) {
	o = o.withDefaults()
	if o.Module == "" {
		return nil, errors.New("storm: no egress module (build host/testdata/egress; `make storm` does)")
	}
	if _, err := os.Stat(o.Module); err != nil {
		return nil, fmt.Errorf("storm: egress module: %w (build it with `make storm`)", err)
	}
	r := &Report{Options: o}
	for _, governed := range []bool{false, true} {
		arm, err := runArm(ctx, o, governed)
		if err != nil {
			return nil, err
		}
		if o.Progress != nil {
			fmt.Fprintf(o.Progress, "storm: arm %s: %d/%d calls in %v, %d upstream 429s\n", arm.Name, arm.Succeeded, arm.Calls,
				arm.Elapsed.Round(time.Millisecond), arm.Upstream429)
		}
		r.Arms = append(r.Arms, arm)
	}
	return r, nil
}

// governorPer100s is the governor's capacity per 100 s: the upstream's
// rate less the margin.
func (o Options) governorPer100s() int64 {
	return max(1, int64(float64(o.Rate)*(1-o.Margin)*100))
}

// class is an agent's priority as a label.
type class string

const (
	interactive class = "interactive"
	background  class = "background"
)

func runArm(ctx context.Context, o Options, governed bool) (*Arm, error) {
	up := newUpstream(o.Rate, o.Burst)
	defer up.close()
	var gov *governor.Governor
	if governed {
		var err error
		gov, err = governor.New(governor.Config{Broadcast: -1, Quotas: []governor.Quota{{
			Name: "upstream", Capacity: o.governorPer100s(), Interval: 100 * time.Second, Burst: int64(o.Burst - o.Headroom),
			Hosts: []string{"127.0.0.1"}}}})
		if err != nil {
			return nil, err
		}
		defer gov.Close()
	}
	d, closeTools, err := toolhost(ctx, o, gov)
	if err != nil {
		return nil, err
	}
	defer closeTools()
	args, _ := json.Marshal(map[string]string{"url": up.srv.URL})
	// Warm up: one call fills the caches; once the governor's pool is
	// full again, the upstream's bucket, clock and record start afresh.
	if _, err := d.Call(ctx, dispatcher.Call{Tool: "egress.fetch", Args: args}); err != nil {
		return nil, fmt.Errorf("storm: warm-up call: %w", err)
	}
	time.Sleep(time.Duration(o.Burst) * time.Second / time.Duration(o.Rate))
	up.reset()

	actx, cancel := context.WithTimeout(ctx, o.MaxDuration)
	defer cancel()
	arm := &Arm{Name: "a: own backoff", Governed: governed}
	if governed {
		arm.Name = "b: governor"
	}
	call := func(ctx context.Context, c class) (time.Duration, error) {
		_, err := d.Call(ctx, dispatcher.Call{Tool: "egress.fetch", Args: args, Options: dispatcher.Options{Priority: string(c)}})
		var de *dispatcher.DispatchError
		if err != nil && !errors.As(err, &de) {
			return 0, fmt.Errorf("%w: %v", errGiveUp, err)
		}
		if de != nil {
			return time.Duration(de.RetryAfterMS) * time.Millisecond, err
		}
		return 0, nil
	}
	runAgents(actx, o, func() caller { return call }, arm)
	arm.answers = up.record()
	arm.summarize()
	return arm, nil
}

// caller makes one call of the tool at priority c: nil on success, else
// the error and the retry_after the failure carried. A failure that is not
// the tool's (no envelope) ends the agent's tries.
type caller func(ctx context.Context, c class) (retryAfter time.Duration, err error)

// errGiveUp marks a failure an agent does not retry.
var errGiveUp = errors.New("storm: not retryable")

// runAgents runs o's agents to the end (or ctx's), each through a caller
// of its own from newCaller, and fills arm's counts and latencies.
func runAgents(actx context.Context, o Options, newCaller func() caller, arm *Arm) {
	var mu sync.Mutex
	latencies := map[class][]time.Duration{}
	var wg sync.WaitGroup
	start := time.Now()
	agent := func(id int, c class, calls int, think time.Duration) {
		rng := rand.New(rand.NewPCG(o.Seed, uint64(id)))
		call := newCaller()
		for range calls {
			lat, ok := oneCall(actx, call, c, rng)
			mu.Lock()
			arm.Calls++
			if ok {
				arm.Succeeded++
				latencies[c] = append(latencies[c], lat)
			} else {
				arm.Failed++
			}
			mu.Unlock()
			if think > 0 && !sleep(actx, think) {
				return
			}
		}
	}
	for i := range o.Interactive {
		wg.Go(func() { agent(i, interactive, o.InteractiveCalls, o.Think) })
	}
	for i := range o.Background {
		wg.Go(func() { agent(o.Interactive+i, background, o.BackgroundCalls, 0) })
	}
	wg.Wait()
	arm.Elapsed = time.Since(start)
	arm.Calls = o.Interactive*o.InteractiveCalls + o.Background*o.BackgroundCalls
	arm.Failed = arm.Calls - arm.Succeeded
	arm.Goodput = float64(arm.Succeeded) / arm.Elapsed.Seconds()
	arm.Latency = map[class]Percentiles{}
	for c, ls := range latencies {
		arm.Latency[c] = percentiles(ls)
	}
}

// summarize counts the upstream's answers.
func (arm *Arm) summarize() {
	for _, a := range arm.answers {
		if a.status == 429 {
			arm.Upstream429++
		} else {
			arm.UpstreamOK++
		}
	}
}

// oneCall is one agent call: call (the dispatcher, with its own
// retries), and around it the agent's own loop of exponential backoff with
// jitter, honouring retry_after_ms, up to 8 tries. It returns the latency
// from the first try to success.
func oneCall(ctx context.Context, call caller, c class, rng *rand.Rand) (time.Duration, bool) {
	start := time.Now()
	for try := range 8 {
		retryAfter, err := call(ctx, c)
		if err == nil {
			return time.Since(start), true
		}
		if errors.Is(err, errGiveUp) || ctx.Err() != nil {
			return 0, false
		}
		backoff := min(200*time.Millisecond<<try, 5*time.Second)
		backoff = time.Duration(float64(backoff) * (1 + 0.5*rng.Float64()))
		backoff = max(backoff, retryAfter)
		if !sleep(ctx, backoff) {
			return 0, false
		}
	}
	return 0, false
}

// toolhost builds the real path: a host runtime granting the egress module
// loopback, the module loaded from a folder of its own, and a dispatcher,
// governed or not.
func toolhost(ctx context.Context, o Options, gov *governor.Governor) (*dispatcher.Dispatcher, func(), error) {
	dir, err := os.MkdirTemp("", "toolhost-storm-")
	if err != nil {
		return nil, nil, err
	}
	b, err := os.ReadFile(o.Module)
	if err != nil {
		return nil, nil, err
	}
	if err := os.WriteFile(filepath.Join(dir, "egress.wasm"), b, 0o644); err != nil {
		return nil, nil, err
	}
	eg := toolhostv1.Egress{Grants: map[string]toolhostv1.Grant{"egress.wasm": {Hosts: []string{"127.0.0.1"}, Schemes: []string{"http"},
		AllowNetworks: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}}}}
	if gov != nil {
		eg.Governor = gov
	}
	rt, err := host.New(ctx, host.Config{CacheDir: o.CacheDir, Egress: eg, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		return nil, nil, err
	}
	loaded, err := loader.Load(ctx, rt, dir, loader.Options{})
	if err != nil || len(loaded.Errors) > 0 {
		_ = rt.Close(ctx)
		if err == nil {
			err = loaded.Errors[0]
		}
		return nil, nil, fmt.Errorf("storm: loading the egress module: %w", err)
	}
	// Both arms get the same dispatcher: room for every agent at once, and
	// the circuit breaker out of the way (the rate applies from the first
	// call, and no rate above 1 is ever met), so that the arms differ only
	// in the governor.
	cfg := dispatcher.Config{Concurrency: 64, Breaker: breaker.Settings{FailureRate: 2, MinCalls: 1}}
	if gov != nil {
		cfg.Governor = gov
	}
	d := dispatcher.New(loaded.Registry, cfg)
	return d, func() { _ = rt.Close(context.Background()); _ = os.RemoveAll(dir) }, nil
}

func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
