package governor

import (
	"context"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

var tenPerSecond = Limit{Capacity: 10, Interval: time.Second, Burst: 5, Window: 10 * time.Second}

func take(t *testing.T, m Store, l Limit, cost, reserve int64) Result {
	t.Helper()
	r, err := m.Take(context.Background(), "q", l, Draw{Cost: cost, Reserve: reserve})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// The pool starts full (Burst tokens), refills one token per Interval/
// Capacity, never holds more than Burst, and counts what it granted over
// the window.
func TestMemoryTokenAccounting(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m := NewMemory()
		l := tenPerSecond
		for i := range 5 {
			if r := take(t, m, l, 1, 0); !r.Granted || r.Available != float64(4-i) {
				t.Fatalf("draw %d: %+v, want granted with %d left", i, r, 4-i)
			}
		}
		r := take(t, m, l, 1, 0)
		if r.Granted || r.Wait != 100*time.Millisecond {
			t.Fatalf("sixth draw: %+v, want refused with a wait of 100ms", r)
		}
		time.Sleep(99 * time.Millisecond)
		if r := take(t, m, l, 1, 0); r.Granted || r.Wait != time.Millisecond {
			t.Fatalf("at 99ms: %+v, want a 1ms wait", r)
		}
		time.Sleep(time.Millisecond)
		if r := take(t, m, l, 1, 0); !r.Granted || r.Used != 6 {
			t.Fatalf("at 100ms: %+v, want granted, used 6", r)
		}
		// A multi-token draw waits for all its tokens.
		if r := take(t, m, l, 3, 0); r.Granted || r.Wait != 300*time.Millisecond {
			t.Fatalf("cost 3 on an empty pool: %+v, want a 300ms wait", r)
		}
		// After a long idle the pool is full again, not fuller.
		time.Sleep(time.Hour)
		if r := take(t, m, l, 5, 0); !r.Granted || r.Available != 0 || r.Used != 5 {
			t.Fatalf("after an hour: %+v, want the whole burst and only it counted", r)
		}
		if r := take(t, m, l, 1, 0); r.Granted {
			t.Fatalf("the pool held more than its burst: %+v", r)
		}
	})
}

// A reserve keeps tokens back: from a full pool of 5 with a reserve of 2,
// three draws pass, and a draw without reserve still gets the rest.
func TestMemoryReserve(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m := NewMemory()
		for i := range 3 {
			if r := take(t, m, tenPerSecond, 1, 2); !r.Granted {
				t.Fatalf("draw %d with reserve refused: %+v", i, r)
			}
		}
		if r := take(t, m, tenPerSecond, 1, 2); r.Granted || r.Wait != 100*time.Millisecond {
			t.Fatalf("draw into the reserve: %+v, want refused for 100ms", r)
		}
		for range 2 {
			if r := take(t, m, tenPerSecond, 1, 0); !r.Granted {
				t.Fatalf("draw without reserve refused: %+v", r)
			}
		}
	})
}

// Block refuses everything until it lifts, then lets tokens back one
// emission interval apart, starting with one: no burst at the release.
func TestMemoryBlockEmptiesThePool(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m := NewMemory()
		l := tenPerSecond
		r, _ := m.Block(context.Background(), "q", l, 2*time.Second)
		if r.Blocked != 2*time.Second {
			t.Fatalf("Blocked = %v, want 2s", r.Blocked)
		}
		if r := take(t, m, l, 1, 0); r.Granted || r.Wait != 2*time.Second {
			t.Fatalf("while blocked: %+v, want a 2s wait", r)
		}
		// A shorter block does not shorten it.
		if r, _ := m.Block(context.Background(), "q", l, time.Second); r.Blocked != 2*time.Second {
			t.Fatalf("a shorter block changed it: %v", r.Blocked)
		}
		time.Sleep(2 * time.Second)
		if r := take(t, m, l, 1, 0); !r.Granted {
			t.Fatalf("at the release: %+v, want one token", r)
		}
		if r := take(t, m, l, 1, 0); r.Granted || r.Wait != 100*time.Millisecond {
			t.Fatalf("second draw at the release: %+v, want a 100ms wait", r)
		}
	})
}

// Usage counts the last window only.
func TestMemoryUsageWindow(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m := NewMemory()
		l := Limit{Capacity: 1000, Interval: time.Second, Burst: 1000, Window: 10 * time.Second}
		take(t, m, l, 30, 0)
		time.Sleep(5 * time.Second)
		if r := take(t, m, l, 20, 0); r.Used != 50 {
			t.Fatalf("used = %d, want 50", r.Used)
		}
		time.Sleep(5*time.Second + 200*time.Millisecond)
		if r, _ := m.Peek(context.Background(), "q", l); r.Used != 20 {
			t.Fatalf("used after the first draw left the window = %d, want 20", r.Used)
		}
		time.Sleep(5 * time.Second)
		if r, _ := m.Peek(context.Background(), "q", l); r.Used != 0 {
			t.Fatalf("used after both left = %d, want 0", r.Used)
		}
	})
}

// grantLog records (store time, cost) for every granted draw.
type grantLog struct {
	Store
	mu     sync.Mutex
	grants []grantAt
}

type grantAt struct {
	at   time.Time
	cost int64
}

func (g *grantLog) Take(ctx context.Context, quota string, l Limit, d Draw) (Result, error) {
	r, err := g.Store.Take(ctx, quota, l, d)
	if err == nil && r.Granted {
		g.mu.Lock()
		g.grants = append(g.grants, grantAt{r.Now, d.Cost})
		g.mu.Unlock()
	}
	return r, err
}

// checkConservation asserts that in every window [t_i, t_j] the grants
// sum to at most Burst + (t_j - t_i)/Emission: the pool never granted
// more than its capacity.
func checkConservation(t *testing.T, l Limit, grants []grantAt) {
	t.Helper()
	slices.SortStableFunc(grants, func(a, b grantAt) int { return a.at.Compare(b.at) })
	T := l.Emission()
	for i := range grants {
		var sum int64
		for j := i; j < len(grants); j++ {
			sum += grants[j].cost
			if sum <= l.Burst {
				continue
			}
			if span := grants[j].at.Sub(grants[i].at); time.Duration(sum-l.Burst)*T > span {
				t.Fatalf("grants %d..%d: %d tokens in %v, over burst %d + %v/%v", i, j, sum, span, l.Burst, span, T)
			}
		}
	}
}

// Property: many goroutines drawing random costs at random priorities
// through the Governor, with real concurrency (run under -race), never get
// more than the pool's capacity in any window; and the pool is not left
// idle while they wait (they get close to all of it).
func TestConservationUnderConcurrency(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		log := &grantLog{Store: NewMemory()}
		l := Limit{Capacity: 50, Interval: time.Second, Burst: 8}
		g, err := New(Config{Store: log, Broadcast: -1, MaxWait: time.Hour,
			Quotas: []Quota{{Name: "q", Capacity: l.Capacity, Interval: l.Interval, Burst: l.Burst}}})
		if err != nil {
			t.Fatal(err)
		}
		defer g.Close()
		l.Window = g.cfg.Window
		const workers, draws = 40, 25
		var wg sync.WaitGroup
		for w := range workers {
			rng := rand.New(rand.NewPCG(uint64(w), 7))
			wg.Go(func() {
				for range draws {
					time.Sleep(time.Duration(rng.IntN(50)) * time.Millisecond)
					r := Request{Quota: "q", Cost: 1 + rng.Int64N(3), Priority: Priority(rng.IntN(4))}
					if _, err := g.Acquire(context.Background(), r); err != nil {
						t.Errorf("Acquire: %v", err)
						return
					}
				}
			})
		}
		start := time.Now()
		wg.Wait()
		elapsed := time.Since(start)
		checkConservation(t, l, log.grants)
		var total int64
		for _, gr := range log.grants {
			total += gr.cost
		}
		if want := l.Burst + int64(elapsed/l.Emission()); total > want || total < want*9/10 {
			t.Fatalf("granted %d tokens in %v; a busy pool grants about %d", total, elapsed, want)
		}
	})
}

// The same property on the store alone, with the real clock and no
// governor queue: goroutines hammer Take directly.
func TestConservationHammerStore(t *testing.T) {
	log := &grantLog{Store: NewMemory()}
	l := Limit{Capacity: 2000, Interval: time.Second, Burst: 20, Window: time.Second}
	stop := time.Now().Add(150 * time.Millisecond)
	var wg sync.WaitGroup
	for range 16 {
		wg.Go(func() {
			for time.Now().Before(stop) {
				_, _ = log.Take(context.Background(), "q", l, Draw{Cost: 1})
			}
		})
	}
	wg.Wait()
	if len(log.grants) < int(l.Burst) {
		t.Fatalf("only %d grants", len(log.grants))
	}
	checkConservation(t, l, log.grants)
}
