package compile

import (
	"context"
	"runtime"
	"testing"
	"testing/synctest"
)

// TestRunningCountsOutAStoppedCompile: a compile whose context ends stops
// counting at once, before its done, so the next compile gets every CPU;
// done after that counts nothing twice.
func TestRunningCountsOutAStoppedCompile(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		procs := runtime.GOMAXPROCS(0)
		var r Running
		ctx, stop := context.WithCancel(context.Background())
		_, doneStopped := r.Begin(ctx)
		if w, done := r.Begin(context.Background()); w != max(1, procs/2) {
			t.Fatalf("workers beside a running compile = %d, want %d", w, max(1, procs/2))
		} else {
			done()
		}
		stop()
		synctest.Wait()
		next, doneNext := r.Begin(context.Background())
		if next != procs {
			t.Fatalf("workers beside a stopped compile = %d, want %d", next, procs)
		}
		doneStopped() // the stopped compile's child is reaped: no second count-out
		doneNext()
		if n := r.n.Load(); n != 0 {
			t.Fatalf("running = %d after every compile is done, want 0", n)
		}
	})
}
