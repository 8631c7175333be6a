package events_test

import (
	"fmt"
	"sync"
	"testing"

	"github.com/toolhost/toolhost/events"
)

// BenchmarkPublish measures what a call pays to publish one event while S
// subscribers with P type prefixes each are streaming (each drained by its
// own goroutine, as /events handlers are), from parallel publishers. Only
// the last prefix of each subscriber matches. subs=100/prefixes=60000 is
// the attack of issue 10 finding 10 (which /events now refuses; the bus
// itself takes it, in process). It uses only Subscribe and Publish, so the
// same file runs against older versions of the bus (docs/BENCHMARKS.md).
func BenchmarkPublish(b *testing.B) {
	for _, arm := range []struct{ subs, prefixes int }{{0, 0}, {8, 16}, {64, 16}, {100, 60000}} {
		b.Run(fmt.Sprintf("subs=%d/prefixes=%d", arm.subs, arm.prefixes), func(b *testing.B) {
			prefixes := make([]string, arm.prefixes)
			for i := range prefixes {
				prefixes[i] = fmt.Sprintf("nomatch%d.", i)
			}
			if arm.prefixes > 0 {
				prefixes[arm.prefixes-1] = "dispatch."
			}
			bus := events.NewBus(nil)
			var readers sync.WaitGroup
			subs := make([]*events.Subscription, arm.subs)
			for i := range subs {
				subs[i] = bus.Subscribe(1024, prefixes...)
				readers.Go(func() {
					for range subs[i].C {
					}
				})
			}
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					bus.Publish("dispatch.result", nil)
				}
			})
			b.StopTimer()
			for _, s := range subs {
				s.Close()
			}
			readers.Wait()
		})
	}
}
