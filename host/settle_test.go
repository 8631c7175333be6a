package host

import (
	"context"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

// TestSettlerFreesOnceLoadingIsQuiet: memory is returned once, a quiet
// period after the last load of a burst ends; a load that starts within
// the period holds it back, and nothing is returned while one runs or
// when nothing was loaded since the last time.
func TestSettlerFreesOnceLoadingIsQuiet(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var frees atomic.Int64 // the timer's goroutine frees
		s := &settler{free: func() { frees.Add(1) }, quiet: time.Second}
		step := func(d time.Duration, want int64, when string) {
			t.Helper()
			time.Sleep(d)
			synctest.Wait()
			if n := frees.Load(); n != want {
				t.Fatalf("%s: %d frees, want %d", when, n, want)
			}
		}
		s.begin()
		s.begin()
		s.end()
		step(5*time.Second, 0, "one of two loads still running")
		s.end()
		step(500*time.Millisecond, 0, "within the quiet period")
		s.begin() // the next module of the batch
		step(5*time.Second, 0, "a load started within the quiet period")
		s.end()
		step(999*time.Millisecond, 0, "just before the quiet period ends")
		step(2*time.Millisecond, 1, "once the quiet period ended")
		step(time.Minute, 1, "with nothing loaded since")
		s.begin()
		s.end()
		s.stop()
		step(time.Minute, 1, "after stop")
	})
}

// TestLoadReturnsFreedMemory: a load, once it ends, hands what it freed
// back to the operating system, once.
func TestLoadReturnsFreedMemory(t *testing.T) {
	ctx := context.Background()
	rt, path := misbehaveRuntime(t)
	freed := make(chan struct{})
	rt.settle.free = func() { close(freed) } // a second free would panic
	rt.settle.quiet = 0
	if _, err := rt.LoadFile(ctx, path); err != nil {
		t.Fatal(err)
	}
	rt.settle.mu.Lock()
	armed := rt.settle.timer != nil || rt.settle.frees > 0
	rt.settle.mu.Unlock()
	if !armed {
		t.Fatal("a load ended and no free of its memory is due")
	}
	<-freed
	rt.settle.mu.Lock()
	defer rt.settle.mu.Unlock()
	if rt.settle.frees != 1 || rt.settle.busy != 0 {
		t.Fatalf("after one load: %d frees, %d loads counted as running; want 1 and 0", rt.settle.frees, rt.settle.busy)
	}
}
