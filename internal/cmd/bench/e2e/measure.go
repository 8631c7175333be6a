package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolhost/toolhost/internal/cmd/bench/proc"
)

// input is the text every call counts: a short sentence, so the numbers
// are about the path to the tool, not the tool's work.
const input = "the cat and the hat sat on the mat\nand the bat"

// sample is one arm's run at one concurrency in one round.
type sample struct {
	calls   int
	elapsed time.Duration
	lat     []time.Duration // sorted
	cpu     time.Duration   // the server process's CPU time over the run
}

// cpuPerCall is the server's CPU time per call: its user and system time,
// every thread's, in 10 ms ticks, over the calls of the run.
func (m sample) cpuPerCall() time.Duration {
	if m.calls == 0 {
		return 0
	}
	return m.cpu / time.Duration(m.calls)
}

func (m sample) rate() float64 { return float64(m.calls) / m.elapsed.Seconds() }

func (m sample) pct(p float64) time.Duration { return pct(m.lat, p) }

func pct(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	return sorted[int(p*float64(len(sorted)-1))]
}

// measure opens c sessions (one per worker, outside the timing), makes one
// untimed call on each, then has every worker call in a loop for d.
// clientVersion is the revision the client asks for; "" leaves it to the
// SDK client.
var clientVersion string

func measure(ctx context.Context, url string, c int, d time.Duration) (sample, error) {
	sessions := make([]*mcp.ClientSession, c)
	defer func() {
		for _, s := range sessions {
			if s != nil {
				s.Close()
			}
		}
	}()
	// Connections of a round's own: a connection left idle in a shared
	// pool since the last round (while the other arms ran) may be one the
	// server is closing for idling as the round's first POST goes out (a
	// race any idle timeout has), and that POST then fails with EOF.
	tr := http.DefaultTransport.(*http.Transport).Clone()
	defer tr.CloseIdleConnections()
	httpClient := &http.Client{Transport: tr}
	client := mcp.NewClient(&mcp.Implementation{Name: "bench-e2e", Version: "bench"}, nil)
	var tool string
	for i := range sessions {
		var opts *mcp.ClientSessionOptions
		if clientVersion != "" {
			opts = &mcp.ClientSessionOptions{ProtocolVersion: clientVersion}
		}
		s, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: httpClient, DisableStandaloneSSE: true}, opts)
		if err != nil {
			return sample{}, err
		}
		sessions[i] = s
		if tool == "" {
			if tool, err = findTool(ctx, s); err != nil {
				return sample{}, err
			}
		}
		if err := call(ctx, s, tool); err != nil {
			return sample{}, err
		}
	}
	lats := make([][]time.Duration, c)
	errs := make([]error, c)
	var wg sync.WaitGroup
	start := time.Now()
	end := start.Add(d)
	for i, s := range sessions {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for time.Now().Before(end) {
				t0 := time.Now()
				if err := call(ctx, s, tool); err != nil {
					errs[i] = err
					return
				}
				lats[i] = append(lats[i], time.Since(t0))
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	var m sample
	for i := range lats {
		if errs[i] != nil {
			return sample{}, errs[i]
		}
		m.lat = append(m.lat, lats[i]...)
	}
	slices.Sort(m.lat)
	m.calls, m.elapsed = len(m.lat), elapsed
	return m, nil
}

// findTool returns text.count's name on the wire (toolhost may spell it
// differently for clients that reject dots).
func findTool(ctx context.Context, s *mcp.ClientSession) (string, error) {
	for t, err := range s.Tools(ctx, nil) {
		if err != nil {
			return "", err
		}
		if t.Name == "text.count" || t.Name == "text_count" {
			return t.Name, nil
		}
	}
	return "", fmt.Errorf("no text.count tool listed")
}

func call(ctx context.Context, s *mcp.ClientSession, tool string) error {
	r, err := s.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: map[string]any{"text": input}})
	if err != nil {
		return err
	}
	if r.IsError {
		return fmt.Errorf("tool error: %v", r.Content)
	}
	return nil
}

// results holds every sample by arm, concurrency and round.
type results struct {
	by map[string]map[int][]sample
}

func newResults() *results { return &results{by: map[string]map[int][]sample{}} }

func (r *results) add(arm string, c, _ int, m sample) {
	if r.by[arm] == nil {
		r.by[arm] = map[int][]sample{}
	}
	r.by[arm][c] = append(r.by[arm][c], m)
}

// print writes one row per arm and concurrency: the median round's calls/s,
// p50 and p99 over every call of every round, and the median of the
// per-round ratios to the floor's calls/s in the same round.
func (r *results) print(w io.Writer, servers []*proc.Child, cs []int) {
	fmt.Fprintln(w, "\n| arm | concurrency | calls/s (median round) | p50 | p99 | ratio to floor (median of rounds) | per-round ratios | server CPU per call (median round) |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|")
	for _, c := range cs {
		floor := r.by["floor"][c]
		for _, s := range servers {
			ms := r.by[s.Name][c]
			var rates, ratios, cpus []float64
			var all []time.Duration
			for i, m := range ms {
				rates = append(rates, m.rate())
				cpus = append(cpus, float64(m.cpuPerCall()))
				ratios = append(ratios, m.rate()/floor[i].rate())
				all = append(all, m.lat...)
			}
			slices.Sort(all)
			per := ""
			for _, x := range ratios {
				per += fmt.Sprintf("%.2f ", x)
			}
			fmt.Fprintf(w, "| %s | %d | %.0f | %s | %s | %.2f× | %s| %s |\n", s.Name, c, median(rates),
				round(pct(all, 0.50)), round(pct(all, 0.99)), median(ratios), per, round(time.Duration(median(cpus))))
		}
	}
}

func round(d time.Duration) string {
	switch {
	case d >= time.Millisecond:
		return d.Round(10 * time.Microsecond).String()
	default:
		return d.Round(time.Microsecond).String()
	}
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}
