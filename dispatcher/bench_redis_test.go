package dispatcher

import (
	"context"
	"encoding/json"
	"strconv"
	"testing"
	"time"

	"github.com/toolhost/toolhost/idempotency"
	"github.com/toolhost/toolhost/idempotency/redisstore"
	"github.com/toolhost/toolhost/internal/redisconn"
	"github.com/toolhost/toolhost/internal/testkit/redistest"
)

// BenchmarkKeyedCall is a keyed call's cost through the whole dispatcher
// with each store: a new key (claim, run a handler that does nothing,
// store the outcome) and a replayed one. -count repeats each
// sub-benchmark in a row, so alternate the stores with a loop of runs:
//
//	for i in $(seq 10); do go test -run '^$' -bench KeyedCall -benchtime 2000x ./dispatcher/; done > keyed.txt
//	benchstat -col /store keyed.txt
func BenchmarkKeyedCall(b *testing.B) {
	srv := redistest.Start(b)
	c, err := redisconn.Open(redisconn.Options{URL: srv.URL()})
	if err != nil {
		b.Fatal(err)
	}
	rs := redisstore.New(redisstore.Options{Conn: c, Errors: OutcomeErrors})
	b.Cleanup(func() { rs.Close(); c.Close() })
	stores := []struct {
		name  string
		store idempotency.Store
	}{{"memory", nil}, {"redis", rs}}
	args := json.RawMessage(`{}`)
	ctx := context.Background()
	// A dispatcher per run: the in-memory store's bound of keys per caller
	// must not be what a long run measures.
	dispatcher := func(s idempotency.Store) *Dispatcher {
		return New(newRegistry(b, toolSpec{name: "noop", handler: noop}), Config{Idempotency: s, IdempotencyTTL: time.Minute})
	}
	for _, s := range stores {
		b.Run("store="+s.name+"/key=new", func(b *testing.B) {
			d := dispatcher(s.store)
			b.ReportAllocs()
			prefix := strconv.FormatInt(time.Now().UnixNano(), 36) + "-"
			i := 0
			for b.Loop() {
				i++
				if _, err := d.Call(ctx, Call{Tool: "noop", Args: args, Options: Options{IdempotencyKey: prefix + strconv.Itoa(i)}}); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run("store="+s.name+"/key=replayed", func(b *testing.B) {
			d := dispatcher(s.store)
			b.ReportAllocs()
			for b.Loop() {
				if _, err := d.Call(ctx, Call{Tool: "noop", Args: args, Options: Options{IdempotencyKey: "same"}}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
