package dispatcher

import (
	"context"
	"encoding/json"
	"sync"
	"sync/atomic"
)

// DefaultGatherLimit is GatherBounded's limit when given 0 or less.
const DefaultGatherLimit = 8

// Result is one call's outcome in a gather: Value on success, Err (a
// *DispatchError) otherwise.
type Result struct {
	Value json.RawMessage
	Err   error
}

// GatherBounded runs calls with at most limit in flight and returns their
// results in input order. A failing call does not cancel its siblings. When
// ctx ends, calls not yet started are not started: their results carry the
// cancellation, and their permits were never taken.
func (d *Dispatcher) GatherBounded(ctx context.Context, calls []Call, limit int) []Result {
	if limit <= 0 {
		limit = DefaultGatherLimit
	}
	results := make([]Result, len(calls))
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
					results[i] = Result{Err: classifyWait(calls[i].Tool, ctx, 0)}
					continue
				}
				v, err := d.Call(ctx, calls[i])
				results[i] = Result{Value: v, Err: err}
			}
		})
	}
	wg.Wait()
	return results
}
