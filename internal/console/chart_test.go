package console

import (
	"fmt"
	"math"
	"sync"
	"testing"
	"time"
)

// Quantiles read from the bins are within a factor of sqrt(latGrowth) of
// the true ones, across the bins' range.
func TestChartQuantilesWithinABin(t *testing.T) {
	for _, scale := range []time.Duration{10 * time.Microsecond, time.Millisecond, 200 * time.Millisecond, 5 * time.Second} {
		c := newCharts()
		at := time.Unix(1_800_000_000, 0)
		for i := 1; i <= 1000; i++ {
			c.add("a", at, time.Duration(i)*scale/100, false)
		}
		sp := span(c.view(at, true, ""))
		for _, q := range []struct {
			got  time.Duration
			want time.Duration
		}{{sp.P50, 500 * scale / 100}, {sp.P99, 990 * scale / 100}} {
			ratio := float64(q.got) / float64(q.want)
			if q.want > latBase && (ratio > math.Sqrt(latGrowth)*1.001 || ratio < 1/math.Sqrt(latGrowth)/1.001) {
				t.Errorf("scale %v: quantile %v, want about %v (ratio %.3f)", scale, q.got, q.want, ratio)
			}
		}
		if sp.Calls != 1000 {
			t.Errorf("scale %v: %d calls, want 1000", scale, sp.Calls)
		}
	}
}

// A slot is reused for its step ten minutes on, not added to; callers past
// chartCallers share one series, charted only for a caller who sees all.
func TestChartRingAndCallerCap(t *testing.T) {
	c := newCharts()
	at := time.Unix(1_800_000_000, 0)
	c.add("a", at, time.Millisecond, true)
	later := at.Add(chartPoints * chartStep)
	c.add("a", later, time.Millisecond, false)
	if sp := span(c.view(later, true, "")); sp.Calls != 1 || sp.Failed != 0 {
		t.Fatalf("ten minutes on: %+v, want the new call alone", sp)
	}
	for i := range chartCallers + 5 {
		c.add(fmt.Sprint("agent-", i), later, time.Millisecond, false)
	}
	if len(c.by) != chartCallers+1 {
		t.Fatalf("%d series, want %d and the shared one", len(c.by), chartCallers)
	}
	if sp := span(c.view(later, false, "agent-68")); sp.Calls != 0 {
		t.Errorf("an agent past the cap is charted its own series: %+v", sp)
	}
	if sp := span(c.view(later, true, "")); sp.Calls != 1+chartCallers+5 {
		t.Errorf("the operator's chart: %d calls, want every one", sp.Calls)
	}
}

// TestChartAddDoesNotWaitForAView: add runs on the event bus's
// publisher's goroutine, so while a view holds the lock it queues the call
// (it would hang here otherwise), and the next view counts it.
func TestChartAddDoesNotWaitForAView(t *testing.T) {
	c := newCharts()
	now := time.Unix(1_800_000_000, 0)
	c.add("a", now, time.Millisecond, false)
	c.mu.Lock() // a view in progress
	c.add("a", now, time.Millisecond, true)
	c.add("b", now, time.Millisecond, false)
	c.mu.Unlock()
	last := c.view(now, true, "")[chartPoints-1]
	if last.calls != 3 || last.failed != 1 {
		t.Errorf("the view counts %d calls, %d failed; want 3 and 1", last.calls, last.failed)
	}
	if got := c.view(now, false, "b")[chartPoints-1].calls; got != 1 {
		t.Errorf("b's view counts %d calls, want 1", got)
	}
}

// TestChartAddsBesideViews: adds from several goroutines beside views in
// progress are all counted in the end.
func TestChartAddsBesideViews(t *testing.T) {
	c := newCharts()
	now := time.Unix(1_800_000_000, 0)
	const adders, each = 4, 1000
	var wg sync.WaitGroup
	for range adders {
		wg.Go(func() {
			for range each {
				c.add("a", now, time.Millisecond, false)
			}
		})
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for range 200 {
			c.view(now, true, "")
		}
	}()
	wg.Wait()
	<-done
	if got := c.view(now, true, "")[chartPoints-1].calls; got != adders*each {
		t.Errorf("counted %d calls, added %d", got, adders*each)
	}
}
