package loader

import (
	"context"
	"sync/atomic"
	"testing"
)

type fakeModule struct{ closed atomic.Int32 }

func (f *fakeModule) Close(context.Context) error { f.closed.Add(1); return nil }

func TestModuleRefClosesAfterLastCall(t *testing.T) {
	var total atomic.Int64
	m := &fakeModule{}
	r := &moduleRef{mod: m, total: &total}
	if !r.acquire() || !r.acquire() || total.Load() != 2 {
		t.Fatal("acquire on a live module")
	}
	r.retire()
	if m.closed.Load() != 0 {
		t.Fatal("closed with calls in flight")
	}
	r.release()
	if m.closed.Load() != 0 {
		t.Fatal("closed with one call still in flight")
	}
	r.release()
	if m.closed.Load() != 1 || total.Load() != 0 {
		t.Fatalf("closed %d times, %d in flight; want closed once when the last call returned", m.closed.Load(), total.Load())
	}
	if r.acquire() {
		t.Fatal("acquire succeeded on a closed module")
	}
	r.retire()
	if m.closed.Load() != 1 {
		t.Fatal("closed twice")
	}
}

func TestModuleRefIdleRetireClosesAtOnce(t *testing.T) {
	m := &fakeModule{}
	r := &moduleRef{mod: m}
	r.retire()
	if m.closed.Load() != 1 {
		t.Fatal("an idle retired module must close at once")
	}
}
