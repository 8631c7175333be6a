package main

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"
)

// Bounds on the server's RSS. Every call runs in a fresh instance, up to 64
// at once, and a Go guest's instance holds 7-9 MiB of linear memory: about
// 600 MiB live at most, which Go's collector lets grow to twice that
// before it collects (GOGC=100), and returns to the OS lazily. So the
// level is bounded absolutely, and a leak is looked for as a trend: the
// second half of the load may not peak much above the first. A leak of one
// instance per call would be gigabytes within the short run.
const (
	soakPeakRSS  = 3 << 29  // 1.5 GiB: the server's RSS at its highest
	soakRSSTrend = 64 << 20 // the second half's peak over 125% of the first's
)

type soakReport struct {
	duration   time.Duration
	workers    int
	stats      *soakStats
	breakers   map[string]int
	probe      *healthProbe
	start, end map[string]float64
	drain      drainResult
	audit      int
	auditDup   int
}

// markdown renders the figures as docs/RELIABILITY.md shows them.
func (r soakReport) markdown() string {
	s := r.stats
	s.mu.Lock()
	defer s.mu.Unlock()
	var all []time.Duration
	var b strings.Builder
	fmt.Fprintf(&b, "| call | share | faults injected | calls | outcomes | p50 | p99 |\n|---|---|---|---|---|---|---|\n")
	total := 0
	for _, name := range sortedKeys(s.perOp) {
		total += s.perOp[name].calls
	}
	for _, op := range soakMix("") {
		st := s.perOp[op.name]
		if st == nil {
			continue
		}
		all = append(all, st.latencies...)
		var outs []string
		for _, k := range sortedKeys(st.outcomes) {
			outs = append(outs, fmt.Sprintf("%s %d", k, st.outcomes[k]))
		}
		fault := op.fault
		if fault == "" {
			fault = "none"
		}
		fmt.Fprintf(&b, "| %s | %.0f%% | %s | %d | %s | %s | %s |\n", op.name, 100*float64(st.calls)/float64(total), fault,
			st.calls, strings.Join(outs, ", "), ms(percentile(st.latencies, 50)), ms(percentile(st.latencies, 99)))
	}
	ids, keys := s.duplicatedLocked()
	fmt.Fprintf(&b, "\n| figure | value |\n|---|---|\n")
	row := func(k string, v any) { fmt.Fprintf(&b, "| %s | %v |\n", k, v) }
	row("duration of the load", r.duration.Round(time.Second))
	row("concurrency (workers / MCP sessions)", fmt.Sprintf("%d / 8", r.workers))
	row("requests", total)
	row("throughput", fmt.Sprintf("%.0f calls/s", float64(total)/r.duration.Seconds()))
	row("latency p50 / p99 (all calls)", ms(percentile(all, 50))+" / "+ms(percentile(all, 99)))
	row("attempts / retries (server)", fmt.Sprintf("%.0f / %.0f", r.end["toolhost_attempts_total"], r.end["toolhost_retries_total"]))
	var trips []string
	for _, k := range slices.Sorted(maps.Keys(r.breakers)) {
		trips = append(trips, fmt.Sprintf("%s %d", k, r.breakers[k]))
	}
	row("breaker trips (to open)", strings.Join(trips, ", "))
	row("lost (no response)", s.lost)
	row("duplicated (request id on two responses; key with two nonces)", fmt.Sprintf("%d; %d", ids, keys))
	row("idempotency keys checked (4 calls each)", len(s.nonces))
	row("audit log lines / calls that reached the server (load and drain)", fmt.Sprintf("%d / %d", r.audit, s.sent.Load()+int64(r.drain.inFlight)))
	row("/healthz answers (failed; slowest)", fmt.Sprintf("%d (%d; %s)", r.probe.ok, r.probe.bad, ms(r.probe.slowest)))
	row("server goroutines start / end", fmt.Sprintf("%.0f / %.0f", r.start["go_goroutines"], r.end["go_goroutines"]))
	first, second := r.probe.rssPeaks()
	row("server RSS start / peak in the 1st, 2nd half of the load / end", fmt.Sprintf("%s / %s, %s / %s",
		mb(r.start["process_resident_memory_bytes"]), mb(first), mb(second), mb(r.end["process_resident_memory_bytes"])))
	row("SIGTERM: calls in flight / completed", fmt.Sprintf("%d / %d", r.drain.inFlight, r.drain.completed))
	row("SIGTERM: new calls refused (slowest refusal)", fmt.Sprintf("%d (%s)", r.drain.refused, ms(r.drain.refusedIn)))
	row("SIGTERM: exit", fmt.Sprintf("%v after %s", exitText(r.drain.exitErr), ms(r.drain.took)))
	return b.String()
}

func (r soakReport) check(t *testing.T) {
	t.Helper()
	s := r.stats
	ids, keys := s.duplicated()
	s.mu.Lock()
	for i, w := range s.wrong {
		if i == 20 {
			t.Errorf("... and %d more", len(s.wrong)-20)
			break
		}
		t.Errorf("wrong answer: %s", w)
	}
	if s.lost > 0 || ids > 0 || keys > 0 {
		t.Errorf("%d lost, %d request ids on two responses, %d keys executed more than once", s.lost, ids, keys)
	}
	s.mu.Unlock()
	// The drain's calls in flight reach the audit log too (the warm-up's
	// are not counted in r.audit); the calls refused after SIGTERM never
	// reached the server.
	if sent := int(s.sent.Load()) + r.drain.inFlight; r.audit != sent || r.auditDup > 0 {
		t.Errorf("the server logged %d calls (%d request ids twice) for %d sent", r.audit, r.auditDup, sent)
	}
	if r.probe.bad > 0 || r.probe.ok == 0 {
		t.Errorf("/healthz failed %d times of %d: %v", r.probe.bad, r.probe.ok+r.probe.bad, r.probe.failures)
	}
	if r.breakers["flaky"] == 0 {
		t.Errorf("flaky's breaker never opened: %v", r.breakers)
	}
	if g0, g1 := r.start["go_goroutines"], r.end["go_goroutines"]; g1 > g0+soakGoroutineSlack {
		t.Errorf("server goroutines %v at the start, %v once the load stopped", g0, g1)
	}
	first, second := r.probe.rssPeaks()
	if len(r.probe.rss) < 4 { // a run too short to have halves
		first = second
	}
	if max(first, second) > soakPeakRSS || second > 1.25*first+soakRSSTrend {
		t.Errorf("server RSS peaked at %s in the first half of the load, %s in the second", mb(first), mb(second))
	}
	d := r.drain
	if d.completed != d.inFlight || d.refused == 0 || d.exitErr != nil {
		t.Errorf("drain: %d of %d in flight completed, %d new calls refused, exit %v", d.completed, d.inFlight, d.refused, d.exitErr)
	}
}

func ms(d time.Duration) string {
	return fmt.Sprintf("%.1f ms", float64(d)/float64(time.Millisecond))
}

func mb(b float64) string { return fmt.Sprintf("%.0f MiB", b/(1<<20)) }

func exitText(err error) string {
	if err == nil {
		return "status 0"
	}
	return err.Error()
}
