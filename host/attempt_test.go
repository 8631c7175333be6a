package host_test

import (
	"context"
	"testing"
	"time"

	"github.com/toolhost/toolhost/host"
	"github.com/toolhost/toolhost/internal/attempt"
)

// The host tells the dispatcher how long the guest's own code ran: a
// guest that spins until the deadline had about all of it; a call whose
// deadline passed before the guest started (the host was starved) had
// none, though a module was entered.
func TestCallReportsGuestTime(t *testing.T) {
	rt := newRuntime(t, host.Config{})
	m, err := rt.LoadFile(context.Background(), misbehavePath)
	if err != nil {
		t.Fatal(err)
	}
	const timeout = 300 * time.Millisecond
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	ctx, spin := attempt.With(ctx)
	start := time.Now()
	if _, err := m.Call(ctx, "spin", nil, host.Limits{}); err == nil {
		t.Fatal("spin returned")
	}
	guest, ran := spin.Guest()
	if !ran || guest <= 0 || guest > time.Since(start) {
		t.Fatalf("spin: guest time %v (ran %v) of %v", guest, ran, time.Since(start))
	}

	ctx, cancel = context.WithTimeout(context.Background(), time.Nanosecond)
	defer cancel()
	<-ctx.Done()
	ctx, late := attempt.With(ctx)
	if _, err := m.Call(ctx, "echo", []byte(`{}`), host.Limits{}); err == nil {
		t.Fatal("a call past its deadline ran")
	}
	if guest, ran := late.Guest(); !ran || guest != 0 {
		t.Fatalf("expired call: guest time %v (ran %v); want 0 in a module", guest, ran)
	}
}
