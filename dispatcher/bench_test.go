package dispatcher

import (
	"context"
	"encoding/json"
	"strconv"
	"sync/atomic"
	"testing"

	"github.com/toolhost/toolhost/idempotency"
	"github.com/toolhost/toolhost/registry"
)

var noop = registry.HandlerFunc(func(context.Context, json.RawMessage) (json.RawMessage, error) {
	return json.RawMessage(`{}`), nil
})

// roomy has room for every new key of a benchmark, however many
// iterations it runs (the default 10,000 per caller refuses the rest).
var roomy = idempotency.Limits{MaxKeys: 1 << 30, MaxKeysPerCaller: 1 << 30, MaxBytes: 1 << 40, MaxBytesPerCaller: 1 << 40}

// BenchmarkDispatch measures the dispatcher's own cost on a handler that
// does nothing: lookup, validation (of {}: the verdict taken at load;
// no-key-args: decoded and validated), budget, breaker, slot, timeout,
// events (no subscriber).
func BenchmarkDispatch(b *testing.B) {
	d := New(newRegistry(b, toolSpec{name: "noop", handler: noop}), Config{IdempotencyLimits: roomy})
	benchCalls(b, d, context.Background())
}

// benchCalls runs the no-key, new-key and replayed-key sub-benchmarks of
// calls to d's "noop" tool within ctx.
func benchCalls(b *testing.B, d *Dispatcher, ctx context.Context) {
	args := json.RawMessage(`{}`)
	b.Run("no-key", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := d.Call(ctx, Call{Tool: "noop", Args: args}); err != nil {
				b.Fatal(err)
			}
		}
	})
	// no-key-args: arguments to decode and validate, where {} has its
	// verdict taken at load.
	withArgs := json.RawMessage(`{"text":"hello, world","n":3}`)
	b.Run("no-key-args", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := d.Call(ctx, Call{Tool: "noop", Args: withArgs}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("new-key", func(b *testing.B) {
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			i++
			if _, err := d.Call(ctx, Call{Tool: "noop", Args: args, Options: Options{IdempotencyKey: strconv.Itoa(i)}}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("replayed-key", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := d.Call(ctx, Call{Tool: "noop", Args: args, Options: Options{IdempotencyKey: "same"}}); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkDispatchParallel: many goroutines through one dispatcher and one
// tool (the per-tool cap raised so the limiter is not what is measured).
func BenchmarkDispatchParallel(b *testing.B) {
	d := New(newRegistry(b, toolSpec{name: "noop", handler: noop}), Config{Concurrency: 1 << 16, GlobalConcurrency: 1 << 16})
	args := json.RawMessage(`{}`)
	var n atomic.Int64
	b.Run("no-key", func(b *testing.B) {
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if _, err := d.Call(context.Background(), Call{Tool: "noop", Args: args}); err != nil {
					b.Error(err)
				}
			}
		})
	})
	b.Run("keys", func(b *testing.B) {
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				key := strconv.FormatInt(n.Add(1)%1024, 10) // a mix of new and replayed keys
				if _, err := d.Call(context.Background(), Call{Tool: "noop", Args: args, Options: Options{IdempotencyKey: key}}); err != nil {
					b.Error(err)
				}
			}
		})
	})
}
