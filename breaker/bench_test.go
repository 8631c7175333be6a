package breaker

import (
	"testing"
	"time"
)

// A closed breaker on the hot path: every call takes and returns a ticket.
func BenchmarkAllowRecord(b *testing.B) {
	br := New(Settings{}, Options{})
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			t, ok := br.Allow()
			if !ok {
				b.Error("closed breaker refused a call")
				return
			}
			br.Record(t, Success)
		}
	})
}

// An open breaker shedding a flood of calls.
func BenchmarkAllowOpen(b *testing.B) {
	br := New(Settings{Failures: 1}, Options{})
	t, _ := br.Allow()
	br.Record(t, Failure)
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, ok := br.Allow(); ok {
				b.Error("open breaker admitted a call")
				return
			}
		}
	})
}

// Counted failures that never open it (the rate applies from the first
// call and no rate above 1 is ever met): the failure path, which sums the
// window.
func BenchmarkRecordFailure(b *testing.B) {
	br := New(Settings{FailureRate: 2, MinCalls: 1, Window: time.Second}, Options{})
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			t, _ := br.Allow()
			br.Record(t, Failure)
		}
	})
	if s := br.State(); s != Closed {
		b.Fatalf("State() = %v, want closed", s)
	}
}

// Looking up an existing tool's breaker.
func BenchmarkSetFor(b *testing.B) {
	s := NewSet(Settings{}, nil, SetOptions{})
	s.For("echo")
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			s.For("echo")
		}
	})
}
