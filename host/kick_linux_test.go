package host

import (
	"context"
	"runtime"
	"testing"
	"time"
)

// startKicker is newKicker with a channel that receives a value per kick.
func startKicker(t *testing.T) (*kicker, chan struct{}) {
	t.Helper()
	a := newAlarm()
	if a == nil {
		t.Fatal("no eventfd alarm on Linux")
	}
	kicks := make(chan struct{}, 16)
	k := &kicker{alarm: a, pending: map[*time.Time]struct{}{}, added: make(chan struct{}, 1), done: make(chan struct{}),
		kicked: func() { kicks <- struct{}{} }}
	go k.run()
	t.Cleanup(k.close)
	return k, kicks
}

// waitKick fails the test if no kick comes; the bound is only there so a
// broken kicker fails instead of hanging.
func waitKick(t *testing.T, kicks chan struct{}) {
	t.Helper()
	select {
	case <-kicks:
	case <-time.After(30 * time.Second):
		t.Fatal("the kicker never kicked")
	}
}

func (k *kicker) pendingCount() int {
	k.mu.Lock()
	defer k.mu.Unlock()
	return len(k.pending)
}

// TestKickerKicksAtADeadline: a registered deadline that passes is kicked
// and dropped, whether the kicker was parked with nothing to wait for or
// asleep until a later deadline (which the earlier one must interrupt).
func TestKickerKicksAtADeadline(t *testing.T) {
	k, kicks := startKicker(t)
	k.add(time.Now()) // parked: the channel wakes it
	waitKick(t, kicks)
	later := k.add(time.Now().Add(time.Hour)) // asleep in ppoll for an hour
	k.add(time.Now().Add(-time.Second))       // ...cut short by the earlier one
	waitKick(t, kicks)
	if n := k.pendingCount(); n != 1 {
		t.Fatalf("%d deadlines pending after the kick, want the hour-long one", n)
	}
	k.remove(later)
	if n := k.pendingCount(); n != 0 {
		t.Fatalf("%d deadlines pending after remove", n)
	}
	if got := k.kicks.Load(); got != 2 {
		t.Fatalf("kicks = %d, want 2", got)
	}
}

// TestKickerClosesWhileWaiting: close ends a kicker asleep until a far
// deadline, and one parked with none.
func TestKickerClosesWhileWaiting(t *testing.T) {
	for _, far := range []bool{true, false} {
		a := newAlarm()
		k := &kicker{alarm: a, pending: map[*time.Time]struct{}{}, added: make(chan struct{}, 1), done: make(chan struct{})}
		go k.run()
		if far {
			k.add(time.Now().Add(time.Hour))
		}
		k.close() // hangs, and the test times out, if it does not end the goroutine
	}
}

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
	for rt.kick.pendingCount() == 0 {
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
	if n := rt.kick.pendingCount(); n != 0 {
		t.Fatalf("%d deadlines still registered after the call returned", n)
	}
}
