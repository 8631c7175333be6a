package host_test

import (
	"context"
	"testing"
	"time"

	"github.com/toolhost/toolhost/host"
	"github.com/toolhost/toolhost/internal/testkit/testwasm"
)

// recursionFixtures are the guests whose work is recursion without a loop:
// a hand-written WAT module and a C tool (through a function pointer, as
// clang keeps it). Each takes n from the digits of its arguments.
func recursionFixtures(t *testing.T) []struct{ name, path, tool string } {
	return []struct{ name, path, tool string }{
		{"wat", watPath(t, "fib"), "wat.fib"},
		{"c", testwasm.C(t, "host/testdata/cfib"), "c.fib"},
	}
}

// TestDeadlineStopsRecursion: a deadline stops a guest that recurses
// without ever reaching a loop header, and the call ends with the
// context's error, never a late success. fib(60) takes hours, so a call
// that returns at all was stopped. Before the termination check ran at
// function entries the C tool with a 300 ms deadline computing fib(38) ran
// 5 s and succeeded, and this test ran until go test's timeout.
func TestDeadlineStopsRecursion(t *testing.T) {
	rt := newRuntime(t, host.Config{})
	for _, f := range recursionFixtures(t) {
		t.Run(f.name, func(t *testing.T) {
			m, err := rt.LoadFile(context.Background(), f.path)
			if err != nil {
				t.Fatal(err)
			}
			defer m.Close(context.Background())
			// The check does not change what the recursion computes.
			res, err := m.Call(context.Background(), f.tool, []byte(`{"n":20}`), host.Limits{})
			check(t, res, err, outcome{result: "6765"})

			const deadline = 300 * time.Millisecond
			ctx, cancel := context.WithTimeout(context.Background(), deadline)
			defer cancel()
			start := time.Now()
			res, err = m.Call(ctx, f.tool, []byte(`{"n":60}`), host.Limits{})
			took := time.Since(start)
			check(t, res, err, outcome{ctxErr: context.DeadlineExceeded, deadline: deadline})
			// Generous, as in TestCallMisbehave: this checks that the call
			// ends at its deadline, not a speed target (make lateness is).
			if took > deadline+900*time.Millisecond {
				t.Errorf("call with a %v deadline returned after %v", deadline, took)
			}
		})
	}
}
