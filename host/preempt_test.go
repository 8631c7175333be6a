package host_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"runtime"
	"testing"
	"time"

	"github.com/toolhost/toolhost/host"
)

// preemptChildEnv makes the test binary run TestSpinningGuestChild for
// TestSpinningGuestIsPreemptible.
const preemptChildEnv = "TOOLHOST_PREEMPT_CHILD"

// TestSpinningGuestIsPreemptible: with third_party/wazero.patch, compiled
// code leaves native code at loop headers only every 64Ki iterations or
// when a module closes, and native code cannot be preempted by the Go
// runtime. If those exits were lost, a spinning guest would stall its
// deadline's timer (GOMAXPROCS=1) and every stop-the-world of the GC, and
// the process would hang rather than fail (no timer can fire, not even the
// test's -timeout). So the checks run in a child process, which this test
// kills after a generous bound.
func TestSpinningGuestIsPreemptible(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run", "^TestSpinningGuestChild$", "-test.v", "-test.count=1")
	cmd.Env = append(os.Environ(), preemptChildEnv+"=1")
	out, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		t.Fatalf("the child hung with a spinning guest (killed after 2 minutes):\n%s", out)
	}
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
}

// TestSpinningGuestChild is the child of TestSpinningGuestIsPreemptible.
func TestSpinningGuestChild(t *testing.T) {
	if os.Getenv(preemptChildEnv) != "1" {
		t.Skip("run by TestSpinningGuestIsPreemptible")
	}
	_, mb, _ := sharedRuntime(t)

	t.Run("deadline-with-one-P", func(t *testing.T) {
		// With one P, the deadline's timer only fires if the spinning
		// goroutine is preempted.
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		defer cancel()
		_, err := mb.Call(ctx, "spin", []byte(`{}`), host.Limits{})
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("spin with one P = %v; want the deadline", err)
		}
	})

	t.Run("gc-while-spinning", func(t *testing.T) {
		// The call cannot end before its deadline (the guest never stops
		// by itself), so the collections started until then overlap the
		// spinning guest; each one needs a stop-the-world.
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		done := make(chan error, 1)
		go func() {
			_, err := mb.Call(ctx, "spin", []byte(`{}`), host.Limits{})
			done <- err
		}()
		gcs := 0
		for {
			select {
			case err := <-done:
				if !errors.Is(err, context.DeadlineExceeded) {
					t.Fatalf("spin = %v; want the deadline", err)
				}
				if gcs == 0 {
					t.Fatal("no collection ran while the guest spun")
				}
				t.Logf("%d collections completed while the guest spun", gcs)
				return
			default:
				runtime.GC()
				gcs++
			}
		}
	})
}
