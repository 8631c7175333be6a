package host

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/toolhost/toolhost/third_party/wazero/sys"
)

// A guest sleeping when its call's context ends is stopped inside the
// sleep (an exit wazero returns from the call), not handed back to run
// until wazero's close-on-context-done goroutine gets the CPU: that wait
// was most of a sleeping guest's lateness (docs/BENCHMARKS.md, Deadline
// lateness). A sleep that starts after the end stops at once too (a Go
// guest's scheduler goes straight back to sleep).
func TestSleeperStopsTheGuestWhenTheContextEnds(t *testing.T) {
	for name, tc := range map[string]struct {
		end  func(context.CancelFunc) context.Context
		code uint32
	}{
		"deadline": {func(context.CancelFunc) context.Context {
			ctx, cancel := context.WithDeadline(context.Background(), deadlinePast)
			t.Cleanup(cancel)
			return ctx
		}, sys.ExitCodeDeadlineExceeded},
		"canceled": {func(context.CancelFunc) context.Context {
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			return ctx
		}, sys.ExitCodeContextCanceled},
	} {
		t.Run(name, func(t *testing.T) {
			ctx := tc.end(nil)
			for _, ns := range []int64{0, 1e12} {
				func() {
					defer func() {
						var exit *sys.ExitError
						if err, _ := recover().(error); !errors.As(err, &exit) || exit.ExitCode() != tc.code {
							t.Fatalf("sleep(%d) after the context ended: recovered %v; want an exit with code %#x", ns, err, tc.code)
						}
					}()
					sleeper(ctx)(ns)
				}()
			}
		})
	}
}

// deadlinePast is a deadline already gone.
var deadlinePast = time.Unix(0, 0)
