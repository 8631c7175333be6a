package membuf

import (
	"testing"
	"time"
)

// testBudget is a budget on a clock the test moves, with no sweeper of
// its own: the test sweeps.
func testBudget(limit int64, idle time.Duration, now *time.Duration, dropped *int) *Budget {
	closed := make(chan struct{})
	close(closed)
	return &Budget{limit: limit, idle: idle, clock: func() int64 { return int64(*now) },
		dropped: func() { *dropped++ }, pools: map[*Pool]struct{}{}, closed: closed}
}

// TestMemPoolBounds: a module keeps at most poolPerModule buffers, and
// all modules together at most the budget's bytes; what is taken out is
// no longer counted.
func TestMemPoolBounds(t *testing.T) {
	var now time.Duration
	var dropped int
	const size = 1 << 20
	b := testBudget(12*size, time.Minute, &now, &dropped)
	one, two := &Pool{budget: b}, &Pool{budget: b}
	for range poolPerModule + 2 {
		one.put(make([]byte, 0, size))
	}
	if n := one.Pooled(); n != poolPerModule {
		t.Fatalf("one module pooled %d buffers; want at most %d", n, poolPerModule)
	}
	for range poolPerModule {
		two.put(make([]byte, 0, size))
	}
	if n := two.Pooled(); n != 12-poolPerModule {
		t.Fatalf("a second module pooled %d buffers; want %d (the budget's rest)", n, 12-poolPerModule)
	}
	if got := b.Held(); got != 12*size {
		t.Fatalf("budget holds %d bytes; want %d", got, 12*size)
	}
	if buf := one.take(); cap(buf) != size {
		t.Fatalf("took a buffer of %d bytes; want %d", cap(buf), size)
	}
	if got := b.Held(); got != 11*size {
		t.Fatalf("budget holds %d bytes after a take; want %d", got, 11*size)
	}
	two.put(make([]byte, 0, size))
	if n := two.Pooled(); n != 12-poolPerModule+1 {
		t.Fatalf("the room a take made was not used: %d buffers", n)
	}
}

// TestMemBudgetDropsIdlePools: the buffers of a module with no instance
// made or closed for the idle time are dropped, others' kept; a sweep
// that drops reports it once.
func TestMemBudgetDropsIdlePools(t *testing.T) {
	var now time.Duration
	var dropped int
	b := testBudget(1<<30, time.Minute, &now, &dropped)
	idle, busy := &Pool{budget: b}, &Pool{budget: b}
	told := map[*Pool]int{}
	idle.OnIdle(func() { told[idle]++ })
	busy.OnIdle(func() { told[busy]++ })
	idle.put(make([]byte, 0, 4096))
	busy.put(make([]byte, 0, 4096))
	now = 50 * time.Second
	busy.put(busy.take()) // a call at 50 s
	now = 59 * time.Second
	if n := b.sweep(); n != 0 || dropped != 0 {
		t.Fatalf("before the idle time: %d pools emptied, %d reports; want none", n, dropped)
	}
	now = time.Minute
	if n := b.sweep(); n != 1 || idle.Pooled() != 0 || busy.Pooled() != 1 || dropped != 1 {
		t.Fatalf("at the idle time: %d emptied, idle holds %d, busy %d, %d reports; want 1, 0, 1, 1",
			n, idle.Pooled(), busy.Pooled(), dropped)
	}
	if got := b.Held(); got != 4096 {
		t.Fatalf("budget holds %d bytes; want 4096 (busy's buffer)", got)
	}
	if told[idle] != 1 || told[busy] != 0 {
		t.Fatalf("OnIdle told idle %d times, busy %d; want 1, 0", told[idle], told[busy])
	}
	taken := &Pool{budget: b}
	taken.put(make([]byte, 0, 4096))
	taken.take()
	now = 110 * time.Second
	if n := b.sweep(); n != 1 || busy.Pooled() != 0 || b.Held() != 0 || len(b.pools) != 0 {
		t.Fatalf("busy idle too, taken empty: %d emptied, %d pooled, %d bytes held, %d pools listed; want 1, 0, 0, 0",
			n, busy.Pooled(), b.Held(), len(b.pools))
	}
	if told[idle] != 1 || told[busy] != 1 {
		t.Fatalf("OnIdle told idle %d times, busy %d; want 1, 1 (an emptied pool is not told again)", told[idle], told[busy])
	}
}

// TestMemBudgetSweeperRuns: a budget's own sweeper starts with the first
// pooled buffer, drops it once idle and reports it; close waits for it,
// and none starts after.
func TestMemBudgetSweeperRuns(t *testing.T) {
	dropped := make(chan struct{}, 1)
	b := newBudget(1<<20, time.Millisecond, func() {
		select {
		case dropped <- struct{}{}:
		default:
		}
	})
	p := &Pool{budget: b}
	p.put(make([]byte, 0, 4096))
	<-dropped
	if p.Pooled() != 0 || b.Held() != 0 {
		t.Fatalf("after the sweeper dropped: %d pooled, %d bytes held; want 0, 0", p.Pooled(), b.Held())
	}
	p.put(make([]byte, 0, 4096)) // a sweeper is watching again
	b.Close()
	p.put(make([]byte, 0, 4096))
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.sweeper {
		t.Fatal("a sweeper runs after close")
	}
}
