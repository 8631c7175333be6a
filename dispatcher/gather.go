package dispatcher

import (
	"context"
	"sync"
	"sync/atomic"
)

// DefaultGatherLimit is GatherBounded's limit when given 0 or less.
const DefaultGatherLimit = 8

// GatherBounded runs calls with at most limit in flight and returns their
// outcomes in input order. A failing call does not cancel its siblings. When
// ctx ends, calls not yet started are not started: their results carry the
// cancellation, and their permits were never taken.
func (d *Dispatcher) GatherBounded(ctx context.Context, calls []Call, limit int) []Outcome {
	if limit <= 0 {
		limit = DefaultGatherLimit
	}
	outcomes := make([]Outcome, len(calls))
	var next atomic.Int64
	var wg sync.WaitGroup
	// limit workers pulling the next index: at most limit calls in flight
	// by construction, and no goroutine per call.
	for range min(limit, len(calls)) {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= len(calls) {
					return
				}
				if ctx.Err() != nil {
					outcomes[i] = failed(classifyWait(calls[i].Tool, ctx, 0))
					continue
				}
				outcomes[i] = d.Do(ctx, calls[i])
			}
		})
	}
	wg.Wait()
	return outcomes
}
