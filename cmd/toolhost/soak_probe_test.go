package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// serverMetrics reads the server's /metrics and returns the samples whose
// names are asked for (labels ignored: values of one name are summed).
func serverMetrics(hc *http.Client, base string, names ...string) (map[string]float64, error) {
	resp, err := hc.Get(base + "/metrics")
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("/metrics: %s", resp.Status)
	}
	out := map[string]float64{}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "#") {
			continue
		}
		name, rest, _ := strings.Cut(line, " ")
		name, _, _ = strings.Cut(name, "{")
		for _, want := range names {
			if name == want {
				v, err := strconv.ParseFloat(strings.TrimSpace(rest), 64)
				if err == nil {
					out[name] += v
				}
			}
		}
	}
	return out, sc.Err()
}

// healthProbe asks /healthz every 100 ms until stopped, keeping count of
// answers, failures and the slowest answer. It also samples the server's
// RSS from /metrics every second, for the peak.
type healthProbe struct {
	mu       sync.Mutex
	ok, bad  int
	slowest  time.Duration
	failures []string
	rss      []float64 // the server's RSS, once a second

	stop chan struct{}
	done chan struct{}
}

func startHealthProbe(hc *http.Client, base string) *healthProbe {
	p := &healthProbe{stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(p.done)
		tick := time.NewTicker(100 * time.Millisecond) // a probe's pace, not a wait for an event
		defer tick.Stop()
		for n := 0; ; n++ {
			select {
			case <-p.stop:
				return
			case <-tick.C:
			}
			p.check(hc, base)
			if n%10 == 0 {
				if m, err := serverMetrics(hc, base, "process_resident_memory_bytes"); err == nil {
					p.mu.Lock()
					p.rss = append(p.rss, m["process_resident_memory_bytes"])
					p.mu.Unlock()
				}
			}
		}
	}()
	return p
}

func (p *healthProbe) check(hc *http.Client, base string) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+"/healthz", nil)
	start := time.Now()
	resp, err := hc.Do(req)
	took := time.Since(start)
	ok := err == nil && resp.StatusCode == http.StatusOK
	if resp != nil {
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.slowest = max(p.slowest, took)
	if ok {
		p.ok++
		return
	}
	p.bad++
	if len(p.failures) < 10 {
		p.failures = append(p.failures, fmt.Sprintf("after %v: %v %v", took, resp, err))
	}
}

func (p *healthProbe) finish() {
	close(p.stop)
	<-p.done
}

// rssPeaks returns the highest RSS sampled in the first and in the second
// half of the load: a leak shows as a second half above the first.
func (p *healthProbe) rssPeaks() (first, second float64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for i, v := range p.rss {
		if i < len(p.rss)/2 {
			first = max(first, v)
		} else {
			second = max(second, v)
		}
	}
	return first, second
}

// breakerWatch counts breaker transitions to open, from /events, until the
// stream ends (the server shuts it at shutdown) or the test ends.
type breakerWatch struct {
	mu    sync.Mutex
	opens map[string]int
}

func watchBreakers(t *testing.T, hc *http.Client, base string) *breakerWatch {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+"/events?type=breaker.", nil)
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	w := &breakerWatch{opens: map[string]int{}}
	done := make(chan struct{})
	go func() {
		defer close(done)
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			data, ok := strings.CutPrefix(sc.Text(), "data: ")
			if !ok {
				continue
			}
			var e struct {
				Data struct{ Tool, To string } `json:"data"`
			}
			if json.Unmarshal([]byte(data), &e) == nil && e.Data.To == "open" {
				w.mu.Lock()
				w.opens[e.Data.Tool]++
				w.mu.Unlock()
			}
		}
	}()
	t.Cleanup(func() {
		cancel()
		<-done
		resp.Body.Close()
	})
	return w
}

func (w *breakerWatch) counts() map[string]int {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := map[string]int{}
	for k, v := range w.opens {
		out[k] = v
	}
	return out
}
