package events_test

import (
	"sync"
	"testing"

	"github.com/toolhost/toolhost/events"
)

// TestObserveSeesEveryEventInOrder: an observer is called for every event
// of its prefixes, however many publishers and however fast, in seq order,
// with nothing dropped; and not after Close.
func TestObserveSeesEveryEventInOrder(t *testing.T) {
	bus := events.NewBus(nil)
	var seqs []uint64
	sub := bus.Observe(func(e events.Event) { seqs = append(seqs, e.Seq) }, "dispatch.")
	if !bus.Enabled() {
		t.Fatal("a bus with an observer is not Enabled")
	}
	if sub.C != nil {
		t.Error("an observer's subscription has a channel")
	}
	const publishers, each = 8, 5000 // far past any subscription's buffer
	var wg sync.WaitGroup
	for range publishers {
		wg.Go(func() {
			for range each {
				bus.Publish("dispatch.result", nil)
				bus.Publish("plan.step", nil)
			}
		})
	}
	wg.Wait()
	if len(seqs) != publishers*each {
		t.Fatalf("observed %d events, published %d of its prefix", len(seqs), publishers*each)
	}
	for i := 1; i < len(seqs); i++ {
		if seqs[i] <= seqs[i-1] {
			t.Fatalf("seq %d observed after %d", seqs[i], seqs[i-1])
		}
	}
	if sub.Dropped() != 0 {
		t.Errorf("an observer dropped %d events", sub.Dropped())
	}
	sub.Close()
	sub.Close()
	bus.Publish("dispatch.result", nil)
	if len(seqs) != publishers*each {
		t.Error("the observer was called after Close")
	}
	if bus.Enabled() {
		t.Error("the bus is still Enabled with its only observer closed")
	}
}

// TestObserveBesideSubscribers: an observer sits beside a subscription
// without either missing events, and CloseSubscribers ends both, closing
// their Done.
func TestObserveBesideSubscribers(t *testing.T) {
	bus := events.NewBus(nil)
	n := 0
	bus.Observe(func(events.Event) { n++ })
	sub := bus.Subscribe(16)
	bus.Publish("a", nil)
	bus.Publish("b", nil)
	if got := len(drain(sub)); n != 2 || got != 2 {
		t.Fatalf("observer saw %d, subscriber %d; want 2 each", n, got)
	}
	obs := bus.Observe(func(events.Event) {})
	bus.CloseSubscribers()
	bus.Publish("c", nil)
	if n != 2 {
		t.Error("CloseSubscribers left the observer observing")
	}
	select {
	case <-obs.Done():
	default:
		t.Error("CloseSubscribers left an observer's Done open")
	}
	select {
	case <-sub.Done():
	default:
		t.Error("CloseSubscribers left a subscription's Done open")
	}
}

// TestObserverPanicLeavesTheBusUsable: a panic in an observer reaches
// the publisher, and the bus still delivers afterwards.
func TestObserverPanicLeavesTheBusUsable(t *testing.T) {
	bus := events.NewBus(nil)
	boom := bus.Observe(func(events.Event) { panic("observer bug") }, "boom")
	sub := bus.Subscribe(4)
	func() {
		defer func() {
			if recover() == nil {
				t.Error("the observer's panic did not reach the publisher")
			}
		}()
		bus.Publish("boom", nil)
	}()
	boom.Close() // takes the bus's lock: it would hang had the panic kept it
	bus.Publish("after", nil)
	// The panicking event may not have reached everyone; the next does.
	if got := drain(sub); len(got) == 0 || got[len(got)-1].Type != "after" {
		t.Errorf("after the panic the subscriber got %v", got)
	}
}
