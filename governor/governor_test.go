package governor

import (
	"context"
	"errors"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/toolhost/toolhost/events"
)

// newTest builds a governor with one quota "q" of capacity per second and
// burst, no periodic broadcast unless cfg sets one, and closes it at the
// end of the test.
func newTest(t *testing.T, capacity, burst int64, cfg Config) *Governor {
	t.Helper()
	cfg.Quotas = append(cfg.Quotas, Quota{Name: "q", Capacity: capacity, Interval: time.Second, Burst: burst,
		Hosts: []string{"api.example.com", "*.cdn.example.com"}, Tools: map[string]int64{"gh.search": min(2, burst)}})
	if cfg.Broadcast == 0 {
		cfg.Broadcast = -1
	}
	g, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(g.Close)
	return g
}

func drain(t *testing.T, g *Governor, n int) {
	t.Helper()
	for range n {
		if _, err := g.Acquire(context.Background(), Request{Quota: "q", Priority: Critical}); err != nil {
			t.Fatal(err)
		}
	}
}

// order records the order in which goroutines got their grants.
type order struct {
	mu  sync.Mutex
	got []string
	at  []time.Duration
}

func (o *order) add(name string, d time.Duration) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.got = append(o.got, name)
	o.at = append(o.at, d)
}

// spawn starts an Acquire in its own goroutine and waits until it is in
// line (or decided), so that arrival order is exact.
func spawn(t *testing.T, wg *sync.WaitGroup, g *Governor, o *order, name string, p Priority, start time.Time) {
	wg.Go(func() {
		if _, err := g.Acquire(context.Background(), Request{Quota: "q", Priority: p}); err != nil {
			t.Errorf("%s: %v", name, err)
			return
		}
		o.add(name, time.Since(start))
	})
	synctest.Wait()
}

// Among waiters, a higher class is served first; within a class, the
// earlier arrival.
func TestPriorityOrder(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := newTest(t, 10, 1, Config{})
		drain(t, g, 1)
		start := time.Now()
		var wg sync.WaitGroup
		o := &order{}
		spawn(t, &wg, g, o, "bg1", Background, start)
		spawn(t, &wg, g, o, "normal", Normal, start)
		spawn(t, &wg, g, o, "bg2", Background, start)
		spawn(t, &wg, g, o, "critical", Critical, start)
		spawn(t, &wg, g, o, "interactive", Interactive, start)
		wg.Wait()
		want := []string{"critical", "interactive", "normal", "bg1", "bg2"}
		if !equal(o.got, want) {
			t.Fatalf("order %v, want %v", o.got, want)
		}
		for i, d := range o.at {
			if want := time.Duration(i+1) * 100 * time.Millisecond; d != want {
				t.Errorf("%s granted after %v, want %v", o.got[i], d, want)
			}
		}
	})
}

// Waiting raises a waiter's effective class by one per Aging: a background
// draw that has waited 3 s with Aging 1 s outranks a fresh interactive one
// (rank 3 > 2), and ties go to the earlier arrival.
func TestAging(t *testing.T) {
	for _, tc := range []struct {
		aging time.Duration
		want  []string
	}{
		{time.Second, []string{"old-bg", "interactive"}},
		{time.Hour, []string{"interactive", "old-bg"}},
	} {
		t.Run(tc.aging.String(), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				g := newTest(t, 10, 1, Config{Aging: tc.aging, MaxWait: time.Minute})
				if _, err := g.Report(context.Background(), Feedback{Quota: "q", Status: 429, RetryAfter: 4 * time.Second}); err != nil {
					t.Fatal(err)
				}
				start := time.Now()
				var wg sync.WaitGroup
				o := &order{}
				spawn(t, &wg, g, o, "old-bg", Background, start)
				time.Sleep(3 * time.Second)
				spawn(t, &wg, g, o, "interactive", Interactive, start)
				wg.Wait()
				if !equal(o.got, tc.want) {
					t.Fatalf("order %v, want %v", o.got, tc.want)
				}
			})
		})
	}
}

// A waiter whose deadline comes before its estimated turn fails at once
// with a LimitError carrying the estimate; one whose deadline allows it
// waits and is granted.
func TestFailFast(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := newTest(t, 1, 1, Config{})
		drain(t, g, 1)
		ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
		defer cancel()
		start := time.Now()
		_, err := g.Acquire(ctx, Request{Quota: "q", Priority: Critical})
		var le *LimitError
		if !errors.As(err, &le) || !errors.Is(err, ErrRateLimited) {
			t.Fatalf("err = %v, want a LimitError", err)
		}
		if time.Since(start) != 0 {
			t.Fatalf("failing took %v, want no wait at all", time.Since(start))
		}
		if le.RetryAfter != time.Second {
			t.Fatalf("RetryAfter = %v, want 1s", le.RetryAfter)
		}
		ctx2, cancel2 := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel2()
		gr, err := g.Acquire(ctx2, Request{Quota: "q", Priority: Background})
		if err != nil || gr.Waited != time.Second {
			t.Fatalf("Acquire with time to spare: %+v, %v; want granted after 1s", gr, err)
		}
	})
}

// A waiter that could be served in time fails as soon as higher-class
// arrivals push its turn past its deadline, not at the deadline.
func TestFailFastWhenOvertaken(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := newTest(t, 10, 1, Config{})
		drain(t, g, 1)
		start := time.Now()
		var failedAt time.Duration
		var wg sync.WaitGroup
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 250*time.Millisecond)
			defer cancel()
			_, err := g.Acquire(ctx, Request{Quota: "q", Priority: Background})
			if !errors.Is(err, ErrRateLimited) {
				t.Errorf("background: %v, want rate limited", err)
			}
			failedAt = time.Since(start)
		})
		synctest.Wait()
		o := &order{}
		for _, name := range []string{"c1", "c2", "c3"} {
			spawn(t, &wg, g, o, name, Critical, start)
		}
		wg.Wait()
		if failedAt != 0 {
			t.Fatalf("the overtaken waiter failed after %v, want at once", failedAt)
		}
		if len(o.got) != 3 {
			t.Fatalf("critical grants: %v", o.got)
		}
	})
}

// A cancelled waiter leaves the line with the context's error and does
// not hold up the others.
func TestCancelledWaiter(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := newTest(t, 10, 1, Config{})
		drain(t, g, 1)
		ctx, cancel := context.WithCancel(context.Background())
		var wg sync.WaitGroup
		wg.Go(func() {
			if _, err := g.Acquire(ctx, Request{Quota: "q", Priority: Critical}); !errors.Is(err, context.Canceled) {
				t.Errorf("err = %v, want context.Canceled", err)
			}
		})
		synctest.Wait()
		start := time.Now()
		o := &order{}
		spawn(t, &wg, g, o, "next", Background, start)
		cancel()
		wg.Wait()
		if len(o.at) != 1 || o.at[0] != 100*time.Millisecond {
			t.Fatalf("the next waiter: %v %v, want granted at 100ms", o.got, o.at)
		}
	})
}

func subscribe(t *testing.T, bus *events.Bus) func() []State {
	sub := bus.Subscribe(1024, EventState)
	t.Cleanup(sub.Close)
	return func() []State {
		var out []State
		for {
			select {
			case e := <-sub.C:
				out = append(out, e.Data.(State))
			default:
				return out
			}
		}
	}
}

// The quota enters throttle mode when the last window used 80% of its
// allowance, stays there down to 60% (hysteresis), and leaves below it;
// each change is one event with a new epoch.
func TestThrottleHysteresis(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		bus := events.NewBus(nil)
		states := subscribe(t, bus)
		// 10 per second over a 10 s window: an allowance of 100.
		g := newTest(t, 10, 10, Config{Events: bus})
		mode := func() Mode { return g.Status(context.Background())[0].Mode }
		for range 79 {
			if _, err := g.Acquire(context.Background(), Request{Quota: "q", Priority: Critical}); err != nil {
				t.Fatal(err)
			}
		}
		if m := mode(); m != ModeNormal {
			t.Fatalf("after 79 of 100: %s, want normal", m)
		}
		drain(t, g, 1) // 80 of 100
		if m := mode(); m != ModeThrottled {
			t.Fatalf("after 80 of 100: %s, want throttled", m)
		}
		// The draws went out over about 7 s. Each second from now, about
		// ten of them leave the window.
		between := 0
		for range 12 {
			time.Sleep(time.Second)
			s := g.Status(context.Background())[0]
			if s.Used >= 60 && s.Mode != ModeThrottled {
				t.Fatalf("left throttle mode at %d used, above the exit threshold", s.Used)
			}
			if s.Used >= 60 && s.Used < 80 {
				between++
			}
		}
		if between == 0 {
			t.Fatal("usage never fell between the thresholds: the test does not exercise hysteresis")
		}
		evs := states()
		if len(evs) != 2 || evs[0].Mode != ModeThrottled || evs[1].Mode != ModeNormal || evs[1].Epoch != evs[0].Epoch+1 {
			t.Fatalf("events %+v, want throttled then normal with consecutive epochs", evs)
		}
		if evs[0].Used != 80 || evs[0].Capacity != 100 || evs[0].ThrottleAt != 80 || evs[0].ThrottleBelow != 60 {
			t.Fatalf("entry event %+v, want used 80 of 100, throttling from 80 down to 60", evs[0])
		}
		if evs[1].Used >= 60 {
			t.Fatalf("left throttle mode at %d used, want below 60", evs[1].Used)
		}
	})
}

// In throttle mode background draws leave a reserve that interactive ones
// may use: with the pool throttled, an interactive arrival is served at
// once while background waiters wait for the reserve to refill.
func TestThrottleReserve(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := newTest(t, 10, 10, Config{})
		drain(t, g, 80) // over 7 s: 80 of 100 used, throttled, the pool empty
		if m := g.Status(context.Background())[0].Mode; m != ModeThrottled {
			t.Fatalf("mode %s, want throttled", m)
		}
		time.Sleep(500 * time.Millisecond) // 5 tokens back; the reserve is 5
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
		defer cancel()
		if _, err := g.Acquire(ctx, Request{Quota: "q", Priority: Background}); !errors.Is(err, ErrRateLimited) {
			t.Fatalf("background into the reserve: %v, want rate limited", err)
		}
		if _, err := g.Acquire(ctx, Request{Quota: "q", Priority: Interactive}); err != nil {
			t.Fatalf("interactive from the reserve: %v", err)
		}
	})
}

// A 429 blocks the quota until its Retry-After; waiters are then released
// one emission interval apart in priority order, not all at once; the
// block and its end are events; a shorter Retry-After does not shorten it.
func TestBlockedUntilAndSpreadRelease(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		bus := events.NewBus(nil)
		states := subscribe(t, bus)
		g := newTest(t, 10, 5, Config{Events: bus})
		start := time.Now()
		s, err := g.Report(context.Background(), Feedback{Quota: "q", Status: 429, RetryAfter: 2 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		if s.Mode != ModeBlocked || s.BlockedUntil == nil || !s.BlockedUntil.Equal(start.Add(2*time.Second)) {
			t.Fatalf("state after 429: %+v, want blocked until +2s", s)
		}
		if s2, _ := g.Report(context.Background(), Feedback{Quota: "q", Status: 429, RetryAfter: time.Second}); !s2.BlockedUntil.Equal(*s.BlockedUntil) {
			t.Fatalf("a shorter Retry-After moved blocked_until to %v", s2.BlockedUntil)
		}
		var wg sync.WaitGroup
		o := &order{}
		spawn(t, &wg, g, o, "bg", Background, start)
		spawn(t, &wg, g, o, "n1", Normal, start)
		spawn(t, &wg, g, o, "n2", Normal, start)
		spawn(t, &wg, g, o, "i", Interactive, start)
		wg.Wait()
		want := []string{"i", "n1", "n2", "bg"}
		if !equal(o.got, want) {
			t.Fatalf("release order %v, want %v", o.got, want)
		}
		for i, d := range o.at {
			if want := 2*time.Second + time.Duration(i)*100*time.Millisecond; d != want {
				t.Errorf("%s released at %v, want %v", o.got[i], d, want)
			}
		}
		evs := states()
		if len(evs) != 2 || evs[0].Mode != ModeBlocked || evs[1].Mode != ModeNormal || evs[1].BlockedUntil != nil {
			t.Fatalf("events %+v, want blocked then normal", evs)
		}
	})
}

// A waiter whose deadline falls inside a block fails as soon as the block
// is reported.
func TestBlockFailsHopelessWaiters(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := newTest(t, 10, 1, Config{})
		drain(t, g, 1)
		start := time.Now()
		var wg sync.WaitGroup
		var failedAt time.Duration
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			defer cancel()
			_, err := g.Acquire(ctx, Request{Quota: "q", Priority: Critical})
			var le *LimitError
			if !errors.As(err, &le) || le.RetryAfter != 5*time.Second {
				t.Errorf("err = %v, want a LimitError with a 5s estimate", err)
			}
			failedAt = time.Since(start)
		})
		synctest.Wait()
		time.Sleep(50 * time.Millisecond)
		if _, err := g.Report(context.Background(), Feedback{Quota: "q", Status: 503, RetryAfter: 5 * time.Second}); err != nil {
			t.Fatal(err)
		}
		wg.Wait()
		if failedAt != 50*time.Millisecond {
			t.Fatalf("failed after %v, want when the block was reported (50ms)", failedAt)
		}
	})
}

// Without changes, the state is still broadcast every Broadcast interval,
// with the same epoch.
func TestPeriodicBroadcast(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		bus := events.NewBus(nil)
		states := subscribe(t, bus)
		g := newTest(t, 10, 5, Config{Events: bus, Broadcast: time.Second})
		time.Sleep(3*time.Second + time.Millisecond)
		evs := states()
		if len(evs) != 3 || evs[0].Epoch != evs[2].Epoch || evs[0].Quota != "q" || evs[0].Mode != ModeNormal {
			t.Fatalf("events %+v, want three identical broadcasts", evs)
		}
		g.Close()
	})
}

// Admit resolves the priority (call, then the tool's default, then
// normal), draws the tool's cost and carries the priority for egress.
func TestAdmit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := newTest(t, 10, 4, Config{Priorities: map[string]Priority{"gh.crawl": Background}})
		ctx, err := g.Admit(context.Background(), "gh.search", "interactive", "")
		if p, _ := PriorityFrom(ctx); err != nil || p != Interactive {
			t.Fatalf("Admit: %v, priority %v", err, p)
		}
		if s := g.Status(context.Background())[0]; s.Used != 2 {
			t.Fatalf("gh.search drew %d tokens, want 2", s.Used)
		}
		ctx, _ = g.Admit(context.Background(), "gh.crawl", "", "")
		if p, _ := PriorityFrom(ctx); p != Background {
			t.Fatalf("default priority %v, want background", p)
		}
		ctx, _ = g.Admit(context.Background(), "other", "", "")
		if p, _ := PriorityFrom(ctx); p != Normal {
			t.Fatalf("priority %v, want normal", p)
		}
		if _, err := g.Admit(context.Background(), "other", "urgent", ""); !errors.Is(err, ErrInvalid) {
			t.Fatalf("unknown priority: %v, want ErrInvalid", err)
		}
		if s := g.Status(context.Background())[0]; s.Used != 2 {
			t.Fatalf("tools that draw on no quota drew: used %d", s.Used)
		}
	})
}

// Egress draws: a host matching a quota's patterns draws one token at the
// context's priority; others draw nothing; a reported 429 blocks.
func TestHostDraws(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := newTest(t, 10, 5, Config{})
		ctx := WithPriority(context.Background(), Interactive)
		for _, h := range []string{"api.example.com", "img.cdn.example.com", "example.com", "other.org"} {
			if err := g.AcquireHost(ctx, h, "443"); err != nil {
				t.Fatal(err)
			}
		}
		if s := g.Status(ctx)[0]; s.Used != 2 {
			t.Fatalf("used %d, want 2 (two matching hosts)", s.Used)
		}
		g.ReportHost(ctx, "api.example.com", "443", 429, 3*time.Second)
		if s := g.Status(ctx)[0]; s.Mode != ModeBlocked {
			t.Fatalf("mode %s after a 429, want blocked", s.Mode)
		}
	})
}

func TestInvalid(t *testing.T) {
	g := newTest(t, 10, 5, Config{})
	for _, r := range []Request{{Quota: "nope"}, {Quota: "q", Cost: 6}, {Quota: "q", Cost: -1}, {Quota: "q", Priority: 9}} {
		if _, err := g.Acquire(context.Background(), r); !errors.Is(err, ErrInvalid) {
			t.Errorf("Acquire(%+v) = %v, want ErrInvalid", r, err)
		}
	}
	for _, cfg := range []Config{
		{Quotas: []Quota{{Name: "a", Capacity: 0, Interval: time.Second}}},
		{Quotas: []Quota{{Name: "a", Capacity: 1, Interval: time.Second}, {Name: "a", Capacity: 1, Interval: time.Second}}},
		{Quotas: []Quota{{Name: "a", Capacity: 1, Interval: time.Second, Tools: map[string]int64{"t": 2}}}},
		{Quotas: []Quota{{Name: "a", Capacity: 1, Interval: time.Second, Hosts: []string{"https://x"}}}},
		{ThrottleEnter: 0.5, ThrottleExit: 0.7},
	} {
		if _, err := New(cfg); err == nil {
			t.Errorf("New(%+v) accepted", cfg)
		}
	}
}

func equal(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// A tool drawing on two quotas draws all or nothing: when the second
// refuses, the first gets its tokens back.
func TestAdmitAllOrNothing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g, err := New(Config{Broadcast: -1, Quotas: []Quota{
			{Name: "q", Capacity: 10, Interval: time.Second, Burst: 4, Tools: map[string]int64{"gh.search": 2}},
			{Name: "second", Capacity: 10, Interval: time.Second, Burst: 4, Tools: map[string]int64{"gh.search": 1}},
		}})
		if err != nil {
			t.Fatal(err)
		}
		defer g.Close()
		// Block the second quota for a minute: a call with a short
		// deadline is refused by it at once.
		if _, err := g.Report(context.Background(), Feedback{Quota: "second", Status: 429, RetryAfter: time.Minute}); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		if _, err := g.Admit(ctx, "gh.search", "", ""); err == nil {
			t.Fatal("Admit succeeded while its second quota is blocked")
		}
		for _, s := range g.Status(context.Background()) {
			if s.Quota == "q" && (s.Used != 0 || s.Available != 4) {
				t.Fatalf("quota q after a refused Admit: used %d, available %v; want its 2 tokens back (0, 4)", s.Used, s.Available)
			}
		}
	})
}
