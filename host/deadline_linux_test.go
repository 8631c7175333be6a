package host

import (
	"context"
	"runtime"
	"testing"
	"time"
)

// TestCallsRegisterTheirDeadlines: a call with a deadline is known to the
// kicker while its guest runs, and forgotten once it returns.
func TestCallsRegisterTheirDeadlines(t *testing.T) {
	ctx := context.Background()
	rt, path := misbehaveRuntime(t)
	m, err := rt.LoadFile(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	if rt.kick == nil {
		t.Fatal("the runtime has no kicker on Linux")
	}
	callCtx, cancel := context.WithTimeout(ctx, time.Hour)
	done := make(chan error, 1)
	go func() {
		_, err := m.Call(callCtx, "sleep", []byte(`{"ms":3600000}`), Limits{})
		done <- err
	}()
	for rt.kick.Pending() == 0 {
		select {
		case err := <-done:
			t.Fatalf("the sleeping call returned (%v) without its deadline registered", err)
		default:
			runtime.Gosched()
		}
	}
	cancel()
	if err := <-done; err == nil {
		t.Fatal("the cancelled call succeeded")
	}
	if n := rt.kick.Pending(); n != 0 {
		t.Fatalf("%d deadlines still registered after the call returned", n)
	}
}
