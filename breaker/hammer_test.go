package breaker

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

// hammer runs fn(g, i) for P goroutines × N iterations, all released at once,
// in the manner of wazero's internal/testing/hammer. Run it under -race.
func hammer(t *testing.T, P, N int, fn func(g, i int)) {
	t.Helper()
	if testing.Short() {
		N /= 10
	}
	start := make(chan struct{})
	var wg sync.WaitGroup
	for g := range P {
		wg.Go(func() {
			<-start
			for i := range N {
				fn(g, i)
			}
		})
	}
	close(start)
	wg.Wait()
}

// Many goroutines fight over the probe slots of a half-open breaker: never
// more than Probes tickets are out at once.
func TestHammerHalfOpenProbes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const probes = 3
		b := New(Settings{Failures: 1, Probes: probes, Jitter: -1}, Options{})
		tk, _ := b.Allow()
		b.Record(tk, Failure)
		time.Sleep(DefaultCooldown)
		if s := b.State(); s != HalfOpen {
			t.Fatalf("State() = %v, want half_open", s)
		}
		var out, most, admitted, refused atomic.Int64
		hammer(t, 100, 2000, func(int, int) {
			tk, ok := b.Allow()
			if !ok {
				refused.Add(1)
				return
			}
			admitted.Add(1)
			if !tk.Probe() {
				t.Errorf("half-open issued a non-probe ticket")
			}
			n := out.Add(1)
			for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
			}
			runtime.Gosched()
			out.Add(-1) // before Record, which frees the slot
			b.Record(tk, Ignore)
		})
		if m := most.Load(); m > probes {
			t.Fatalf("%d probe tickets out at once, want at most %d", m, probes)
		}
		if s := b.State(); s != HalfOpen {
			t.Fatalf("State() = %v after only Ignore outcomes, want half_open", s)
		}
		t.Logf("admitted %d, refused %d, most out at once %d", admitted.Load(), refused.Load(), most.Load())
		if admitted.Load() == 0 || refused.Load() == 0 {
			t.Fatalf("admitted %d, refused %d: want some of each", admitted.Load(), refused.Load())
		}
	})
}

// Concurrent failures in a closed breaker are each counted exactly once.
func TestHammerClosedCounts(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const P, N = 100, 20
		n := P * N
		if testing.Short() {
			n = P * (N / 10)
		}
		// A run can never reach n+1, and the rate applies only once the
		// window holds one call more than the hammer makes.
		b := New(Settings{Failures: n + 1, MinCalls: 2*n + 1}, Options{})
		hammer(t, P, N, func(int, int) {
			tk, _ := b.Allow()
			b.Record(tk, Success)
			tk, _ = b.Allow()
			b.Record(tk, Failure)
		})
		if s := b.State(); s != Closed {
			t.Fatalf("State() = %v after %d failures, want closed", s, n)
		}
		if calls, fails := b.win.sum(b.now()); calls != int64(2*n) || fails != int64(n) {
			t.Fatalf("window counted %d calls, %d failures; want %d and %d", calls, fails, 2*n, n)
		}
		tk, _ := b.Allow()
		b.Record(tk, Failure) // n+1 of 2n+1: over half
		if s := b.State(); s != Open {
			t.Fatalf("State() = %v after %d failures of %d calls, want open", s, n+1, 2*n+1)
		}
	})
}

// Random outcomes on real time with a 1 µs cool-down cycle the breaker
// through every state under contention. Each half-open generation never has
// more than Probes probes out, and OnChange sees one unbroken chain of valid
// transitions. OnChange appends without a lock of its own: the breaker
// promises serialized calls, and -race checks that promise.
func TestHammerCycles(t *testing.T) {
	const probes = 2
	var chain []string
	last := Closed
	var b *Breaker
	b = New(Settings{Failures: 3, Window: time.Minute, Cooldown: time.Microsecond, Probes: probes},
		Options{OnChange: func(from, to State) {
			if from != last || !validTransition(from, to) {
				t.Errorf("transition %v→%v after %v", from, to, last)
			}
			last = to
			chain = append(chain, from.String()+"→"+to.String())
			_ = b.State() // may call the breaker
		}})

	var mu sync.Mutex
	out := map[uint64]*atomic.Int32{} // probes out, by generation
	outFor := func(gen uint64) *atomic.Int32 {
		mu.Lock()
		defer mu.Unlock()
		c := out[gen]
		if c == nil {
			c = new(atomic.Int32)
			out[gen] = c
		}
		return c
	}
	rngs := make([]*rand.Rand, 100)
	for g := range rngs {
		rngs[g] = rand.New(rand.NewPCG(1, uint64(g)))
	}
	hammer(t, len(rngs), 1000, func(g, _ int) {
		tk, ok := b.Allow()
		if !ok {
			return
		}
		if tk.Probe() {
			c := outFor(tk.gen)
			if n := c.Add(1); n > probes {
				t.Errorf("generation %d: %d probes out at once, want at most %d", tk.gen, n, probes)
			}
			runtime.Gosched()
			c.Add(-1) // before Record, which frees the slot
		}
		var o Outcome
		switch r := rngs[g].IntN(10); {
		case r < 4:
			o = Failure
		case r < 8:
			o = Success
		default:
			o = Ignore
		}
		b.Record(tk, o)
	})
	counts := map[string]int{}
	for _, c := range chain {
		counts[c]++
	}
	t.Logf("transitions: %v", counts)
	if counts[co] == 0 || counts[oh] == 0 {
		t.Fatalf("transitions %v: the breaker never cycled", counts)
	}
}

func validTransition(from, to State) bool {
	switch from {
	case Closed:
		return to == Open
	case Open:
		return to == HalfOpen
	case HalfOpen:
		return to == Open || to == Closed
	}
	return false
}

// Concurrent first uses of a tool name create one breaker.
func TestHammerSetFor(t *testing.T) {
	s := NewSet(Settings{}, nil, SetOptions{})
	var first [16]atomic.Pointer[Breaker]
	hammer(t, 100, 200, func(g, i int) {
		k := (g + i) % len(first)
		b := s.For(fmt.Sprint("tool", k))
		if !first[k].CompareAndSwap(nil, b) && first[k].Load() != b {
			t.Errorf("tool%d: two breakers", k)
		}
	})
}
