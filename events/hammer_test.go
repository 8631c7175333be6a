package events_test

import (
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/toolhost/toolhost/events"
)

// P publishers × N events against S subscribers under -race: every
// subscriber sees strictly increasing seqs, each publisher's events in
// the order it published them, and (with room for all) every event once.
func TestHammerPublishSubscribe(t *testing.T) {
	const (
		P = 50
		N = 200
		S = 5
	)
	type payload struct{ pub, i int }
	bus := events.NewBus(nil)
	subs := make([]*events.Subscription, S)
	for i := range subs {
		buf := P * N // room for everything
		if i == S-1 {
			buf = 64 // one that falls behind and drops
		}
		subs[i] = bus.Subscribe(buf)
	}
	filtered := bus.Subscribe(P*N, "even")
	subs = append(subs, filtered)

	received := make([][]events.Event, len(subs))
	var readers sync.WaitGroup
	for i, s := range subs {
		readers.Go(func() {
			for e := range s.C {
				received[i] = append(received[i], e)
			}
		})
	}

	var pubs sync.WaitGroup
	for p := range P {
		pubs.Go(func() {
			typ := "odd"
			if p%2 == 0 {
				typ = "even"
			}
			for i := range N {
				bus.Publish(typ, payload{p, i})
			}
		})
	}
	pubs.Wait()
	bus.CloseSubscribers()
	readers.Wait()

	for si, got := range received {
		s := subs[si]
		last := make(map[int]int)
		for k, e := range got {
			if k > 0 && e.Seq <= got[k-1].Seq {
				t.Fatalf("subscriber %d: seq %d after %d", si, e.Seq, got[k-1].Seq)
			}
			pl := e.Data.(payload)
			if prev, ok := last[pl.pub]; ok && pl.i <= prev {
				t.Fatalf("subscriber %d: publisher %d's event %d after its event %d", si, pl.pub, pl.i, prev)
			}
			last[pl.pub] = pl.i
			if s == filtered && e.Type != "even" {
				t.Fatalf("filtered subscriber got %q", e.Type)
			}
		}
		want := P * N
		if s == filtered {
			want = P / 2 * N
		}
		if uint64(len(got))+s.Dropped() != uint64(want) {
			t.Errorf("subscriber %d: %d received + %d dropped != %d", si, len(got), s.Dropped(), want)
		}
		if si < S-1 || s == filtered {
			if s.Dropped() != 0 {
				t.Errorf("subscriber %d with room for everything dropped %d", si, s.Dropped())
			}
		}
	}
	// Every seq was handed out once.
	seen := make(map[uint64]bool, P*N)
	for _, e := range received[0] {
		if seen[e.Seq] || e.Seq < 1 || e.Seq > P*N {
			t.Fatalf("seq %d duplicated or out of range", e.Seq)
		}
		seen[e.Seq] = true
	}
}

// Subscribers come and go (each with prefixes and an identity scope) while
// P publishers publish many types for many callers, under -race: each
// subscription receives only what its filter selects, in increasing seq
// order, and the type index stays consistent (nothing is delivered after
// Close, which would panic on the closed channel).
func TestHammerSubscribersComeAndGo(t *testing.T) {
	const (
		P     = 8
		N     = 2000
		S     = 8
		Round = 50
	)
	bus := events.NewBus(nil)
	stop := make(chan struct{})
	var pubs sync.WaitGroup
	for p := range P {
		pubs.Go(func() {
			for i := range N {
				bus.PublishFor(fmt.Sprint("c", (p+i)%3), fmt.Sprintf("t%d.x", i%10), nil)
			}
		})
	}
	var subs sync.WaitGroup
	for s := range S {
		subs.Go(func() {
			for r := 0; ; r++ {
				select {
				case <-stop:
					return
				default:
				}
				prefix := fmt.Sprintf("t%d", (s+r)%10)
				caller := fmt.Sprint("c", r%3)
				sub := bus.SubscribeFilter(64, events.Filter{Prefixes: []string{prefix}, Scoped: r%2 == 0, Caller: caller})
				var last uint64
				for range Round {
					select {
					case e := <-sub.C:
						if !strings.HasPrefix(e.Type, prefix) || (r%2 == 0 && e.Caller != caller) || e.Seq <= last {
							t.Errorf("sub %s/%s got %+v after seq %d", prefix, caller, e, last)
						}
						last = e.Seq
					default:
					}
				}
				sub.Close()
			}
		})
	}
	pubs.Wait()
	close(stop)
	subs.Wait()
	if bus.Enabled() {
		t.Error("subscriptions left after every Close")
	}
}
