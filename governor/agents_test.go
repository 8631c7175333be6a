package governor

import (
	"context"
	"maps"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/toolhost/toolhost/events"
)

func agentsOf(t *testing.T, g *Governor, quota string) (map[string]int64, int64) {
	t.Helper()
	for _, s := range g.Status(context.Background()) {
		if s.Quota == quota {
			out := make(map[string]int64, len(s.Agents))
			var sum int64
			for name, u := range s.Agents {
				out[name] = u.Used
				sum += u.Used
			}
			if s.Agents == nil || sum != s.Used {
				t.Fatalf("quota %s: agents %v sum to %d; want a map summing to used (%d)", quota, s.Agents, sum, s.Used)
			}
			return out, s.Used
		}
	}
	t.Fatalf("no quota %s", quota)
	return nil, 0
}

// Every draw counts under its agent: governor.acquire's agent, a tool
// call's caller (Admit), the egress draws of that call (AcquireHost, the
// agent its context carries); beyond MaxAgents names they count under
// "other" until a named agent's draws age out of the window. Before, only
// the quota's total was known.
func TestUsagePerAgent(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := newTest(t, 100, 20, Config{MaxAgents: 2, Window: 10 * time.Second})
		ctx := context.Background()
		for _, r := range []Request{{Agent: "triage-1", Cost: 3}, {Agent: "triage-2"}, {Agent: "triage-1"}} {
			r.Quota = "q"
			if _, err := g.Acquire(ctx, r); err != nil {
				t.Fatal(err)
			}
		}
		// Two agents are named: a third folds into other, by every path.
		if _, err := g.Acquire(ctx, Request{Quota: "q", Agent: "crawler", Cost: 2}); err != nil {
			t.Fatal(err)
		}
		actx, err := g.Admit(ctx, "gh.search", "", "alice") // 2 tokens
		if err != nil {
			t.Fatal(err)
		}
		if AgentFrom(actx) != "alice" {
			t.Fatalf("Admit's context carries agent %q; want alice, for the call's egress", AgentFrom(actx))
		}
		if err := g.AcquireHost(actx, "api.example.com", "443"); err != nil {
			t.Fatal(err)
		}
		want := map[string]int64{"triage-1": 4, "triage-2": 1, OtherAgent: 5}
		if got, used := agentsOf(t, g, "q"); !maps.Equal(got, want) || used != 10 {
			t.Fatalf("agents %v (used %d); want %v (used 10)", got, used, want)
		}

		// triage-2 draws again 6 s later, triage-1 does not: after the
		// window, triage-1's name is free for a newcomer, and what it and
		// other drew has aged out.
		time.Sleep(6 * time.Second)
		if _, err := g.Acquire(ctx, Request{Quota: "q", Agent: "triage-2"}); err != nil {
			t.Fatal(err)
		}
		time.Sleep(5 * time.Second)
		if _, err := g.Admit(ctx, "gh.search", "", "bob"); err != nil {
			t.Fatal(err)
		}
		want = map[string]int64{"triage-2": 1, "bob": 2}
		if got, _ := agentsOf(t, g, "q"); !maps.Equal(got, want) {
			t.Fatalf("after the window: agents %v; want %v", got, want)
		}
		time.Sleep(10 * time.Second)
		if got, _ := agentsOf(t, g, "q"); len(got) != 0 {
			t.Fatalf("a window after the last draw: agents %v; want none", got)
		}
	})
}

// A refused Admit gives its caller's tokens back in the agent's count
// too, and an anonymous caller is the agent "".
func TestRefundPerAgent(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g, err := New(Config{Broadcast: -1, Quotas: []Quota{
			{Name: "q", Capacity: 10, Interval: time.Second, Burst: 4, Tools: map[string]int64{"gh.search": 2, "free": 1}},
			{Name: "second", Capacity: 10, Interval: time.Second, Burst: 4, Tools: map[string]int64{"gh.search": 1}},
		}})
		if err != nil {
			t.Fatal(err)
		}
		defer g.Close()
		if _, err := g.Admit(context.Background(), "free", "", ""); err != nil {
			t.Fatal(err)
		}
		if _, err := g.Report(context.Background(), Feedback{Quota: "second", Status: 429, RetryAfter: time.Minute}); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		if _, err := g.Admit(ctx, "gh.search", "", "alice"); err == nil {
			t.Fatal("Admit succeeded while its second quota is blocked")
		}
		if got, _ := agentsOf(t, g, "q"); !maps.Equal(got, map[string]int64{"": 1}) {
			t.Fatalf("agents after a refused Admit: %v; want only the anonymous call's 1", got)
		}
	})
}

// governor.state events carry the agents, read from the store, on a
// change of mode (whose draw answer has none) and on every broadcast;
// the state in an acquire's answer leaves them out rather than show stale
// ones.
func TestStateEventsCarryAgents(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		bus := events.NewBus(nil)
		sub := bus.Subscribe(16, EventState)
		defer sub.Close()
		g := newTest(t, 10, 100, Config{Events: bus, Broadcast: time.Second})
		if _, err := g.Acquire(context.Background(), Request{Quota: "q", Agent: "a1", Cost: 9}); err != nil {
			t.Fatal(err) // 9 of the window's 100: normal
		}
		if _, err := g.Acquire(context.Background(), Request{Quota: "q", Agent: "a2", Cost: 80}); err != nil {
			t.Fatal(err) // 89 of 100: throttled, an event from a draw
		}
		e := <-sub.C
		s := e.Data.(State)
		if s.Mode != ModeThrottled || s.Agents["a1"].Used != 9 || s.Agents["a2"].Used != 80 {
			t.Fatalf("mode change event: %+v; want throttled with a1 9 and a2 80", s)
		}
		time.Sleep(time.Second)
		synctest.Wait()
		e = <-sub.C
		if s := e.Data.(State); s.Agents["a2"].Used != 80 || s.Agents["a1"].Used != 9 {
			t.Fatalf("broadcast: %+v; want the agents", s)
		}
	})
}

func TestCleanAgent(t *testing.T) {
	for in, want := range map[string]string{
		"triage-3":                   "triage-3",
		"":                           "",
		"Ünïcode name with spaces ✓": "Ünïcode name with spaces ✓",
		"nul\x00nl\nesc\x1b[31m":     "nul\uFFFDnl\uFFFDesc\uFFFD[31m",
		"bad\xffutf8":                "bad\uFFFDutf8",
		"c1\u0085":                   "c1\uFFFD",
		strings.Repeat("é", 100):     strings.Repeat("é", 64),
	} {
		if got := CleanAgent(in); got != want {
			t.Errorf("CleanAgent(%q) = %q; want %q", in, got, want)
		}
	}
}
