package kick

import (
	"testing"
	"time"
)

// startKicker is New with a channel that receives a value per kick.
func startKicker(t *testing.T) (*Kicker, chan struct{}) {
	t.Helper()
	a := newAlarm()
	if a == nil {
		t.Fatal("no eventfd alarm on Linux")
	}
	kicks := make(chan struct{}, 16)
	k := start(a, func() { kicks <- struct{}{} })
	t.Cleanup(k.Close)
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

// TestKickerKicksAtADeadline: a registered deadline that passes is kicked
// and dropped, whether the kicker was parked with nothing to wait for or
// asleep until a later deadline (which the earlier one must interrupt).
func TestKickerKicksAtADeadline(t *testing.T) {
	k, kicks := startKicker(t)
	k.Add(time.Now()) // parked: the channel wakes it
	waitKick(t, kicks)
	later := k.Add(time.Now().Add(time.Hour)) // asleep in ppoll for an hour
	k.Add(time.Now().Add(-time.Second))       // ...cut short by the earlier one
	waitKick(t, kicks)
	if n := k.Pending(); n != 1 {
		t.Fatalf("%d deadlines pending after the kick, want the hour-long one", n)
	}
	k.Remove(later)
	if n := k.Pending(); n != 0 {
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
		k := start(a, nil)
		if far {
			k.Add(time.Now().Add(time.Hour))
		}
		k.Close() // hangs, and the test times out, if it does not end the goroutine
	}
}
