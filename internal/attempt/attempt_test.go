package attempt

import (
	"context"
	"runtime"
	"testing"
	"time"
)

type otherKey struct{}

func TestWithCarriesStatsAndParent(t *testing.T) {
	parent, cancel := context.WithCancel(context.WithValue(context.Background(), otherKey{}, "v"))
	ctx, s := With(parent)
	if From(ctx) != s || s == nil {
		t.Fatalf("From(ctx) = %p, want the Stats With returned (%p)", From(ctx), s)
	}
	if From(parent) != nil {
		t.Fatal("the parent carries Stats")
	}
	if got := ctx.Value(otherKey{}); got != "v" {
		t.Fatalf("parent's value through ctx = %v, want v", got)
	}
	s.Enter()
	s.AddGuest(3 * time.Millisecond)
	if g, ran := From(ctx).Guest(); g != 3*time.Millisecond || !ran {
		t.Fatalf("Guest() = %v, %v", g, ran)
	}
	// Contexts derived from ctx are cancelled with the parent through the
	// context package's own tree: no goroutine per child watches ctx.
	before := runtime.NumGoroutine()
	var children []context.Context
	for range 50 {
		c, cc := context.WithCancel(ctx)
		defer cc()
		children = append(children, c)
	}
	if n := runtime.NumGoroutine() - before; n >= 50 {
		t.Fatalf("%d goroutines started for 50 children", n)
	}
	cancel()
	for _, c := range children {
		<-c.Done()
	}
	if ctx.Err() != context.Canceled {
		t.Fatalf("ctx.Err() = %v", ctx.Err())
	}
}

func TestWithAllocatesOnce(t *testing.T) {
	ctx := context.Background()
	if n := testing.AllocsPerRun(100, func() { _, _ = With(ctx) }); n > 1 {
		t.Fatalf("With: %v allocations, want 1", n)
	}
}
