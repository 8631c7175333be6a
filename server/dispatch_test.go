package server

import (
	"context"
	"encoding/json"
	"testing"
	"testing/synctest"
	"time"

	"github.com/toolhost/toolhost/abi"
	"github.com/toolhost/toolhost/dispatcher"
	"github.com/toolhost/toolhost/registry"
)

// TestMaxRetryAfterHoldsTheRetry: [dispatch] max_retry_after caps how long
// a guest's retry_after_ms holds the next attempt, in the dispatcher the
// server builds from the file. An upstream asking for 30 s waits 250 ms
// with the key, the built-in 10 s without it.
func TestMaxRetryAfterHoldsTheRetry(t *testing.T) {
	for _, tc := range []struct {
		file string
		want time.Duration
	}{
		{"[dispatch]\nmax_retry_after = \"250ms\"\n", 250 * time.Millisecond},
		{"[dispatch]\nmax_retry_after = \"2m\"\n", 30 * time.Second},
		{"", 10 * time.Second},
	} {
		synctest.Test(t, func(t *testing.T) {
			var starts []time.Time
			tool := &registry.Tool{Name: "up.stream", Timeout: time.Minute, InputSchema: json.RawMessage(`{"type":"object"}`),
				Handler: registry.HandlerFunc(func(context.Context, json.RawMessage) (json.RawMessage, error) {
					starts = append(starts, time.Now())
					if len(starts) == 1 {
						return nil, &abi.Error{Kind: abi.KindTransient, Message: "429", RetryAfterMS: 30_000}
					}
					return json.RawMessage(`{}`), nil
				})}
			reg, err := registry.New([]*registry.Tool{tool})
			if err != nil {
				t.Fatal(err)
			}
			op, err := NewOperator(parse(t, tc.file), nil)
			if err != nil {
				t.Fatal(err)
			}
			defer op.Close()
			dc := op.DispatcherConfig()
			dc.Rand = func() float64 { return 0 }
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
			defer cancel()
			o := dispatcher.New(reg, dc).Do(ctx, dispatcher.Call{Tool: "up.stream", Args: json.RawMessage(`{}`)})
			if o.Err != nil || o.Attempts != 2 {
				t.Fatalf("%q: %d attempts, %v; want 2 and a result", tc.file, o.Attempts, o.Err)
			}
			if got := starts[1].Sub(starts[0]); got != tc.want {
				t.Errorf("%q: the retry came %v after the first attempt; want %v", tc.file, got, tc.want)
			}
		})
	}
}
