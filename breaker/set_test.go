package breaker

import (
	"slices"
	"testing"
	"testing/synctest"
	"time"
)

func TestSetPerTool(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var got []string
		perTool := map[string]Settings{
			"slow":  {Failures: 3, Cooldown: time.Minute, Jitter: -1},
			"fresh": {Failures: -1}, // non-positive: the Set's default
		}
		s := NewSet(Settings{Failures: 2, Jitter: 0.5}, perTool, SetOptions{
			Rand:     func() float64 { return 0.5 },
			OnChange: func(tool string, from, to State) { got = append(got, tool+" "+from.String()+"→"+to.String()) },
		})
		perTool["slow"] = Settings{Failures: 1} // NewSet copied the map
		tests := []struct {
			tool     string
			failures int           // failures that open it
			retryIn  time.Duration // cool-down then
		}{
			{"plain", 2, 30*time.Second + 7500*time.Millisecond}, // 30 s × (1 + 0.5×0.5)
			{"slow", 3, time.Minute},
			{"fresh", 2, 37500 * time.Millisecond},
		}
		for _, tc := range tests {
			b := s.For(tc.tool)
			if s.For(tc.tool) != b {
				t.Fatalf("For(%q) returned two breakers", tc.tool)
			}
			for i := 1; i <= tc.failures; i++ {
				if st := b.State(); st != Closed {
					t.Fatalf("%s: state %v after %d failures, want closed", tc.tool, st, i-1)
				}
				tk, _ := b.Allow()
				b.Record(tk, Failure)
			}
			if st := b.State(); st != Open {
				t.Fatalf("%s: state %v after %d failures, want open", tc.tool, st, tc.failures)
			}
			if d := time.Until(b.RetryAt()); d != tc.retryIn {
				t.Errorf("%s: RetryAt() = now+%v, want now+%v", tc.tool, d, tc.retryIn)
			}
		}
		want := []string{"plain closed→open", "slow closed→open", "fresh closed→open"}
		if !slices.Equal(got, want) {
			t.Fatalf("transitions %q, want %q", got, want)
		}
	})
}

func TestMerge(t *testing.T) {
	d := Settings{Failures: 2, Window: 3, Cooldown: 4, Jitter: 0.5, Probes: 6}
	tests := []struct {
		name    string
		o, want Settings
	}{
		{"zero inherits all", Settings{}, d},
		{"non-positive inherits", Settings{Failures: -1, Window: -1, Cooldown: -1, Probes: -1}, d},
		{"negative jitter is kept", Settings{Jitter: -1}, Settings{Failures: 2, Window: 3, Cooldown: 4, Jitter: -1, Probes: 6}},
		{"set fields win", Settings{Failures: 9, Window: 9, Cooldown: 9, Jitter: 0.9, Probes: 9},
			Settings{Failures: 9, Window: 9, Cooldown: 9, Jitter: 0.9, Probes: 9}},
	}
	for _, tc := range tests {
		if got := merge(tc.o, d); got != tc.want {
			t.Errorf("%s: merge(%+v) = %+v, want %+v", tc.name, tc.o, got, tc.want)
		}
	}
}

func TestSetStatuses(t *testing.T) {
	s := NewSet(Settings{}, nil, SetOptions{})
	s.For("b")
	s.For("a")
	got := s.Statuses()
	if len(got) != 2 || got[0].Tool != "a" || got[1].Tool != "b" || got[0].State != Closed || !got[0].RetryAt.IsZero() {
		t.Fatalf("Statuses = %+v, want a and b, closed", got)
	}
}

// A closed breaker's status carries its window's counts and thresholds,
// what the console shows as the failure rate against the trip point; an
// open one counts nothing (its window starts again when it closes).
func TestSetStatusesCountTheWindow(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := NewSet(Settings{MinCalls: 4, FailureRate: 0.5, Window: time.Minute}, nil, SetOptions{})
		b := s.For("a")
		for _, o := range []Outcome{Success, Failure, Success} {
			tk, _ := b.Allow()
			b.Record(tk, o)
		}
		got := s.Statuses()[0]
		if got.Calls != 3 || got.Failures != 1 || got.Settings.MinCalls != 4 || got.Settings.FailureRate != 0.5 {
			t.Fatalf("status = %+v, want 3 calls, 1 failure, MinCalls 4, FailureRate 0.5", got)
		}
		tk, _ := b.Allow()
		b.Record(tk, Failure) // 2 of 4: opens
		if got := s.Statuses()[0]; got.State != Open || got.Calls != 0 || got.Failures != 0 {
			t.Fatalf("after tripping: %+v, want open with no counts", got)
		}
		c := s.For("c")
		tk, _ = c.Allow()
		c.Record(tk, Failure)
		time.Sleep(2 * time.Minute) // synctest's clock: past c's window
		if got := s.Statuses()[1]; got.Tool != "c" || got.State != Closed || got.Calls != 0 || got.Failures != 0 {
			t.Fatalf("c's count outlived its window: %+v", got)
		}
	})
}
