package console

import (
	"math"
	"sync"
	"time"
)

// The chart of calls/s and p50/p99 latency over the last ten minutes, in
// points of five seconds. Each point keeps its calls' durations in a
// histogram of log-spaced bins rather than the durations themselves, so
// memory is bounded whatever the call rate: a quantile is read as its
// bin's geometric middle, within ±17% of the true value (latGrowth). The
// series are kept per caller identity, so a caller who does not see
// everything is charted its own calls, as the calls view shows it.
const (
	chartStep   = 5 * time.Second
	chartPoints = 120
	latBins     = 48
	latBase     = 50 * time.Microsecond // the first bin's upper bound
	latGrowth   = 1.4                   // each bin's bound over the last's
	// chartCallers is how many identities get a series of their own;
	// the calls of any beyond share otherCaller's, which only a caller
	// who sees everything is charted.
	chartCallers = 64
	otherCaller  = "\x00other"
)

// point is one chartStep of calls.
type point struct {
	step   int64 // the step's index since the Unix epoch; a stale slot holds an older one
	calls  uint32
	failed uint32
	lat    [latBins]uint32
}

// series is a ring of points, slot step%chartPoints.
type series [chartPoints]point

func (s *series) add(step int64, d time.Duration, failed bool) {
	p := &s[step%chartPoints]
	if p.step != step {
		*p = point{step: step}
	}
	p.calls++
	if failed {
		p.failed++
	}
	p.lat[latBin(d)]++
}

// latBin is the bin whose upper bound is the first at or above d.
func latBin(d time.Duration) int {
	if d <= latBase {
		return 0
	}
	return min(int(math.Ceil(math.Log(float64(d)/float64(latBase))/math.Log(latGrowth))), latBins-1)
}

// latOf is bin i's geometric middle (for bin 0, which holds everything
// up to latBase, as if it began a bin lower).
func latOf(i int) time.Duration {
	return time.Duration(float64(latBase) * math.Pow(latGrowth, float64(i)-0.5))
}

// charts holds the series by caller.
//
// add runs on the publisher's goroutine, under the event bus's lock (the
// console observes the bus), while view merges up to chartCallers series
// under mu, some hundreds of µs: so add never waits for mu. It queues the
// call under pmu, held only to append, and folds the queue in when mu is
// free; view folds it first.
type charts struct {
	mu sync.Mutex
	by map[string]*series

	pmu     sync.Mutex
	pending []chartAdd // calls not yet in by, oldest first; pmu guards it
	spare   []chartAdd // pending's other buffer, reused by fold; mu guards it
}

// chartAdd is a call waiting to be folded into its series.
type chartAdd struct {
	caller string
	step   int64
	d      time.Duration
	failed bool
}

func newCharts() *charts { return &charts{by: map[string]*series{}} }

func (c *charts) add(caller string, at time.Time, d time.Duration, failed bool) {
	c.pmu.Lock()
	c.pending = append(c.pending, chartAdd{caller, at.UnixNano() / int64(chartStep), d, failed})
	c.pmu.Unlock()
	if c.mu.TryLock() {
		c.fold()
		c.mu.Unlock()
	}
}

// fold moves the queued calls into their series. c.mu is held.
func (c *charts) fold() {
	c.pmu.Lock()
	adds := c.pending
	c.pending = c.spare[:0]
	c.pmu.Unlock()
	for _, a := range adds {
		c.addLocked(a)
	}
	c.spare = adds[:0]
}

func (c *charts) addLocked(a chartAdd) {
	caller := a.caller
	s := c.by[caller]
	if s == nil {
		if len(c.by) >= chartCallers {
			caller = otherCaller
			s = c.by[caller]
		}
		if s == nil {
			s = new(series)
			c.by[caller] = s
		}
	}
	s.add(a.step, a.d, a.failed)
}

// chartPoint is one point, or a span of them, as the chart draws it.
type chartPoint struct {
	At          time.Time
	Calls       int
	Failed      int
	CallsPerSec float64
	P50, P99    time.Duration // zero without calls
}

// view is the last chartPoints points ending at now, oldest first, of
// every caller's calls (all) or identity's alone.
func (c *charts) view(now time.Time, all bool, identity string) []point {
	last := now.UnixNano() / int64(chartStep)
	first := last - chartPoints + 1
	merged := make([]point, chartPoints)
	for i := range merged {
		merged[i].step = first + int64(i)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.fold()
	for caller, s := range c.by {
		if !all && caller != identity {
			continue
		}
		for _, p := range s {
			if p.step >= first && p.step <= last {
				merged[p.step-first].merge(&p)
			}
		}
	}
	return merged
}

func (p *point) merge(o *point) {
	p.calls += o.calls
	p.failed += o.failed
	for i, n := range o.lat {
		p.lat[i] += n
	}
}

// span sums points into one chartPoint, its calls/s over their time.
func span(ps []point) chartPoint {
	var sum point
	for i := range ps {
		sum.merge(&ps[i])
	}
	cp := chartPoint{Calls: int(sum.calls), Failed: int(sum.failed),
		CallsPerSec: float64(sum.calls) / (float64(len(ps)) * chartStep.Seconds()),
		P50:         quantile(&sum.lat, sum.calls, 0.50), P99: quantile(&sum.lat, sum.calls, 0.99)}
	if len(ps) > 0 {
		cp.At = time.Unix(0, ps[0].step*int64(chartStep)).UTC()
	}
	return cp
}

// quantile is the q-quantile of a histogram of n durations.
func quantile(h *[latBins]uint32, n uint32, q float64) time.Duration {
	if n == 0 {
		return 0
	}
	rank := max(uint32(math.Ceil(q*float64(n))), 1)
	var seen uint32
	for i, c := range h {
		if seen += c; seen >= rank {
			return latOf(i)
		}
	}
	return latOf(latBins - 1)
}
