package breaker

import (
	"math"
	"slices"
	"strconv"
	"testing"
	"testing/synctest"
	"time"
)

// harness runs a script of steps against one Breaker inside a synctest
// bubble, so time.Sleep moves the fake clock exactly and at once.
type harness struct {
	t       *testing.T
	b       *Breaker
	tickets map[string]Ticket
	events  []string
}

type step func(h *harness)

func call(o Outcome) step {
	return func(h *harness) {
		h.t.Helper()
		t, ok := h.b.Allow()
		if !ok {
			h.t.Fatalf("Allow refused a call to record %v; state %v", o, h.b.State())
		}
		h.b.Record(t, o)
	}
}

func repeat(n int, s step) step {
	return func(h *harness) {
		h.t.Helper()
		for range n {
			s(h)
		}
	}
}

func fails(n int) step { return repeat(n, call(Failure)) }

func seq(steps ...step) step {
	return func(h *harness) {
		h.t.Helper()
		for _, s := range steps {
			s(h)
		}
	}
}

func denied() step {
	return func(h *harness) {
		h.t.Helper()
		if _, ok := h.b.Allow(); ok {
			h.t.Fatalf("Allow admitted a call; state %v", h.b.State())
		}
	}
}

// take takes a ticket under name and checks its probe flag.
func take(name string, probe bool) step {
	return func(h *harness) {
		h.t.Helper()
		t, ok := h.b.Allow()
		if !ok {
			h.t.Fatalf("Allow refused ticket %s; state %v", name, h.b.State())
		}
		if t.Probe() != probe {
			h.t.Fatalf("ticket %s: Probe() = %v, want %v", name, t.Probe(), probe)
		}
		h.tickets[name] = t
	}
}

// give records the ticket taken under name; an unknown name is the zero
// Ticket.
func give(name string, o Outcome) step {
	return func(h *harness) { h.b.Record(h.tickets[name], o) }
}

func sleep(d time.Duration) step { return func(*harness) { time.Sleep(d) } }

func want(s State) step {
	return func(h *harness) {
		h.t.Helper()
		if got := h.b.State(); got != s {
			h.t.Fatalf("State() = %v, want %v", got, s)
		}
	}
}

// retryIn checks RetryAt against now; 0 means the zero time.
func retryIn(d time.Duration) step {
	return func(h *harness) {
		h.t.Helper()
		at := h.b.RetryAt()
		if d == 0 {
			if !at.IsZero() {
				h.t.Fatalf("RetryAt() = now+%v, want zero", time.Until(at))
			}
			return
		}
		if got := time.Until(at); got != d {
			h.t.Fatalf("RetryAt() = now+%v, want now+%v", got, d)
		}
	}
}

// events checks the transitions since the last check.
func events(want ...string) step {
	return func(h *harness) {
		h.t.Helper()
		if !slices.Equal(h.events, want) {
			h.t.Fatalf("transitions %q, want %q", h.events, want)
		}
		h.events = nil
	}
}

const (
	co = "closed→open"
	oh = "open→half_open"
	ho = "half_open→open"
	hc = "half_open→closed"
)

func TestBreaker(t *testing.T) {
	const s30 = 30 * time.Second
	tests := []struct {
		name  string
		s     Settings
		rand  float64 // every draw of Options.Rand
		steps []step
	}{
		{name: "defaults: the fifth failure within the window opens",
			steps: []step{fails(4), want(Closed), call(Failure), want(Open), denied(), retryIn(s30), events(co)}},
		{name: "a success ends a run of failures",
			steps: []step{fails(4), call(Success), fails(4), want(Closed), call(Failure), want(Open)}},
		{name: "at high traffic a few failures do not open (finding: 5 slow attempts shut a healthy tool)",
			steps: []step{repeat(100, call(Success)), fails(5), repeat(100, call(Success)), fails(10), want(Closed), events()}},
		{name: "at high traffic half the calls failing opens",
			s:     Settings{Failures: 100},
			steps: []step{repeat(11, call(Success)), fails(9), want(Closed), call(Failure), want(Closed), call(Failure), want(Open)}},
		{name: "runs shorter than Failures open once MinCalls calls are mostly failures",
			steps: []step{repeat(4, seq(fails(4), call(Success))), want(Closed), call(Failure), want(Open)}},
		{name: "custom FailureRate and MinCalls",
			s:     Settings{FailureRate: 0.1, MinCalls: 10, Failures: 100},
			steps: []step{repeat(9, call(Success)), call(Failure), want(Open)}},
		{name: "a FailureRate above 1 never opens on the rate",
			s:     Settings{FailureRate: 1.5, MinCalls: 1, Failures: 3},
			steps: []step{fails(50), want(Closed)}},
		{name: "calls age out of the window",
			s:     Settings{Failures: 100},
			steps: []step{fails(19), sleep(30 * time.Second), call(Failure), want(Closed)}},
		{name: "calls within the window count",
			s:     Settings{Failures: 100},
			steps: []step{fails(19), sleep(26 * time.Second), call(Failure), want(Open)}},
		{name: "ignored outcomes never count",
			steps: []step{repeat(20, call(Ignore)), fails(4), want(Closed), events()}},
		{name: "a run of failures does not age out",
			steps: []step{call(Failure), sleep(10 * time.Minute), fails(3), want(Closed), call(Failure), want(Open)}},
		{name: "custom Failures and Window",
			s:     Settings{Failures: 3, Window: time.Second, MinCalls: 4},
			steps: []step{repeat(3, call(Success)), sleep(time.Second), fails(2), want(Closed), call(Failure), want(Open)}},
		{name: "Failures 1 opens on the first failure",
			s:     Settings{Failures: 1},
			steps: []step{call(Success), want(Closed), call(Failure), want(Open)}},
		{name: "open refuses calls until the jittered cool-down",
			rand: 0.5, // 30 s × (1 + 0.2×0.5)
			steps: []step{fails(5), retryIn(33 * time.Second), sleep(33*time.Second - 1), denied(), want(Open),
				retryIn(1), sleep(1), want(HalfOpen), retryIn(0), events(co, oh)}},
		{name: "the longest cool-down, jittered, saturates instead of wrapping into the past",
			s: Settings{Cooldown: math.MaxInt64, Jitter: 1}, rand: 0.99,
			steps: []step{fails(5), sleep(24 * time.Hour), want(Open), denied()}},
		{name: "negative Jitter means none",
			s: Settings{Jitter: -1}, rand: 0.9,
			steps: []step{fails(5), retryIn(s30)}},
		{name: "custom Cooldown and Jitter",
			s: Settings{Cooldown: 2 * time.Second, Jitter: 0.25}, rand: 0.5,
			steps: []step{fails(5), retryIn(2250 * time.Millisecond), sleep(2250 * time.Millisecond), want(HalfOpen)}},
		{name: "a probe's success closes and forgets failures",
			s: Settings{Cooldown: time.Second, Jitter: -1, Failures: 100}, // close while the failures are in the window
			steps: []step{fails(20), sleep(time.Second), take("p", true), denied(), give("p", Success), want(Closed),
				take("c", false), give("c", Success), fails(18), want(Closed), events(co, oh, hc)}},
		{name: "a probe's failure reopens with a new cool-down",
			rand: 0.5,
			steps: []step{fails(5), sleep(33 * time.Second), take("p", true), give("p", Failure), want(Open),
				retryIn(33 * time.Second), denied(), sleep(33 * time.Second), want(HalfOpen), events(co, oh, ho, oh)}},
		{name: "a probe recorded as Ignore frees its slot",
			steps: []step{fails(5), sleep(s30), take("p1", true), denied(), give("p1", Ignore), want(HalfOpen),
				take("p2", true), denied(), give("p2", Success), want(Closed)}},
		{name: "an unknown outcome on a probe is Ignore",
			steps: []step{fails(5), sleep(s30), take("p1", true), give("p1", Outcome(42)), want(HalfOpen),
				take("p2", true)}},
		{name: "Probes 3: at most three outstanding; successes keep their slots",
			s: Settings{Probes: 3},
			steps: []step{fails(5), sleep(s30), take("a", true), take("b", true), take("c", true), denied(),
				give("a", Success), denied(), give("b", Success), want(HalfOpen), give("c", Ignore),
				take("d", true), denied(), give("d", Success), want(Closed)}},
		{name: "Probes 3: any probe failure reopens; later probes are stale",
			s: Settings{Probes: 3},
			steps: []step{fails(5), sleep(s30), take("a", true), take("b", true), take("c", true),
				give("a", Success), give("b", Failure), want(Open), give("c", Success), want(Open), events(co, oh, ho)}},
		{name: "a ticket from before a change never counts",
			s: Settings{Failures: 1},
			steps: []step{take("old", false), call(Failure), want(Open), sleep(s30), take("p", true),
				give("old", Failure), want(HalfOpen), give("p", Success), want(Closed), give("old", Failure), want(Closed)}},
		{name: "a stale probe neither frees a slot nor closes",
			s: Settings{Probes: 2},
			steps: []step{fails(5), sleep(s30), take("p1", true), take("p2", true), give("p1", Failure), sleep(s30),
				take("p3", true), take("p4", true), give("p2", Ignore), denied(), give("p2", Success), want(HalfOpen),
				give("p3", Success), want(HalfOpen), give("p4", Success), want(Closed)}},
		{name: "the zero Ticket is never current",
			s:     Settings{Failures: 1},
			steps: []step{give("zero", Failure), want(Closed), events()}},
		{name: "State moves open to half-open lazily",
			steps: []step{fails(5), sleep(s30), events(co), want(HalfOpen), events(oh)}},
		{name: "Allow moves open to half-open",
			steps: []step{fails(5), sleep(s30), take("p", true), events(co, oh)}},
		{name: "RetryAt moves open to half-open",
			steps: []step{fails(5), sleep(s30), retryIn(0), events(co, oh)}},
		{name: "RetryAt is zero when closed",
			steps: []step{fails(4), retryIn(0)}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h := &harness{t: t, tickets: map[string]Ticket{}}
				h.b = New(tc.s, Options{
					Rand:     func() float64 { return tc.rand },
					OnChange: func(from, to State) { h.events = append(h.events, from.String()+"→"+to.String()) },
				})
				for _, s := range tc.steps {
					s(h)
				}
			})
		})
	}
}

func TestSettingsDefaults(t *testing.T) {
	def := Settings{Failures: 5, FailureRate: 0.5, MinCalls: 20, Window: 30 * time.Second, Cooldown: 30 * time.Second, Jitter: 0.2, Probes: 1}
	tests := []struct {
		in, want Settings
	}{
		{Settings{}, def},
		{Settings{Failures: -1, FailureRate: -1, MinCalls: -1, Window: -1, Cooldown: -1, Probes: -1}, def},
		{Settings{Jitter: -1}, Settings{Failures: 5, FailureRate: 0.5, MinCalls: 20, Window: 30 * time.Second, Cooldown: 30 * time.Second, Jitter: -1, Probes: 1}},
		{Settings{Failures: 2, FailureRate: 0.9, MinCalls: 7, Window: 1, Cooldown: 2, Jitter: 0.5, Probes: 3},
			Settings{Failures: 2, FailureRate: 0.9, MinCalls: 7, Window: 1, Cooldown: 2, Jitter: 0.5, Probes: 3}},
	}
	for _, tc := range tests {
		if got := tc.in.withDefaults(); got != tc.want {
			t.Errorf("%+v.withDefaults() = %+v, want %+v", tc.in, got, tc.want)
		}
	}
}

func TestStrings(t *testing.T) {
	tests := []struct{ got, want string }{
		{Closed.String(), "closed"},
		{Open.String(), "open"},
		{HalfOpen.String(), "half_open"},
		{State(7).String(), "State(7)"},
		{Success.String(), "success"},
		{Failure.String(), "failure"},
		{Ignore.String(), "ignore"},
		{Outcome(-1).String(), "Outcome(-1)"},
	}
	for _, tc := range tests {
		if tc.got != tc.want {
			t.Errorf("got %q, want %q", tc.got, tc.want)
		}
	}
}

// OnChange runs without the lock: it may call the Breaker, and a transition
// it causes is delivered after its own, in order.
func TestOnChangeMayCallBreaker(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var got []string
		var b *Breaker
		b = New(Settings{Failures: 1, Jitter: -1}, Options{OnChange: func(from, to State) {
			got = append(got, from.String()+"→"+to.String())
			if to == Open {
				time.Sleep(30 * time.Second) // inside the callback: the next State() moves on
				got = append(got, "RetryAt zero: "+strconv.FormatBool(b.RetryAt().IsZero()))
			}
		}})
		t1, _ := b.Allow()
		b.Record(t1, Failure)
		want := []string{co, "RetryAt zero: true", oh}
		if !slices.Equal(got, want) {
			t.Fatalf("transitions %q, want %q", got, want)
		}
	})
}

// A panicking OnChange reaches the caller but does not stop later
// transitions from being delivered.
func TestOnChangePanic(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var got []string
		b := New(Settings{Failures: 1, Jitter: -1}, Options{OnChange: func(from, to State) {
			got = append(got, from.String()+"→"+to.String())
			if to == Open && len(got) == 1 {
				panic("boom")
			}
		}})
		func() {
			defer func() {
				if recover() == nil {
					t.Fatal("the OnChange panic did not reach Record's caller")
				}
			}()
			t1, _ := b.Allow()
			b.Record(t1, Failure)
		}()
		time.Sleep(30 * time.Second)
		if s := b.State(); s != HalfOpen {
			t.Fatalf("State() = %v after the panic, want half_open", s)
		}
		if want := []string{co, oh}; !slices.Equal(got, want) {
			t.Fatalf("transitions %q, want %q", got, want)
		}
	})
}
