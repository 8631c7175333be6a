package plan

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/toolhost/toolhost/dispatcher"
)

func withFailure(s Step, o OnFailure) Step {
	s.OnFailure = o
	return s
}

// runWith runs one session as runSession does, with a session-wide
// on_failure.
func runWith(t *testing.T, d Dispatcher, p Planner, lim Limits, o OnFailure) SessionResult {
	t.Helper()
	cfg := Config{Dispatcher: d, Planner: p, Reusable: reusable, Now: func() time.Time { return time.Time{} }}
	res, err := New(cfg).Run(context.Background(), Session{ID: "s1", Goal: "on failure", Limits: lim, OnFailure: o})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// The three ways forward after a failed step. Before, every failure went
// back to the planner (replan); skip and abort did not exist.
func TestGoldenOnFailure(t *testing.T) {
	count := `{"text":"skip abort replan"}`
	tests := []struct {
		name    string
		planner *script
		d       *fakeDispatcher
		lim     Limits
		session OnFailure
		status  Status
		reason  Reason
		// executed is StepsExecuted; calls the planner calls.
		executed, calls int
		skipped         []int // steps with a step.skipped event
		message         string
	}{
		{
			// Step 2 fails under skip; 3 uses its result and 4 depends
			// on 3: both are skipped without running, and without
			// charge (max_steps 3 is enough). 5 runs, so does 6, whose
			// $ref into step 1 does not resolve: under skip too, it
			// fails before dispatch and 7 (depends on it) is skipped.
			name: "skip_dependents",
			planner: &script{plans: [][]Step{{
				st(1, "text.count", count),
				withFailure(st(2, "hash.sha256", `{"text":"x"}`), OnFailureSkip),
				st(3, "math.eval", `{"expr":"h","vars":{"h":{"$ref":"/steps/2/result/hex"}}}`),
				{ID: 4, ToolName: "text.case", Args: []byte(`{"text":"a","to":"upper"}`), DependsOn: []int{3}, ExpectedOutcome: "after 3"},
				st(5, "text.slug", `{"text":"still runs"}`),
				withFailure(st(6, "math.eval", `{"expr":"w","vars":{"w":{"$ref":"/steps/1/result/missing"}}}`), OnFailureSkip),
				{ID: 7, ToolName: "text.case", Args: []byte(`{"text":"b","to":"upper"}`), DependsOn: []int{6}, ExpectedOutcome: "after 6"},
			}}},
			d:      &fakeDispatcher{failStep: map[int]dispatcher.Kind{2: dispatcher.KindTransient}},
			lim:    Limits{MaxSteps: 3},
			status: StatusCompleted, reason: ReasonGoalMet, executed: 3, calls: 1, skipped: []int{3, 4, 7},
			message: "under on_failure skip, 2 failed and 3 more were skipped",
		},
		{
			// Step 2 fails under abort: 3 never runs, the planner is not
			// asked again, the session fails.
			name: "abort",
			planner: &script{plans: [][]Step{
				{st(1, "text.count", count), withFailure(st(2, "write.a", `{}`), OnFailureAbort), st(3, "text.slug", `{"text":"x"}`)},
				{st(4, "text.slug", `{"text":"never planned"}`)},
			}},
			d:      &fakeDispatcher{failStep: map[int]dispatcher.Kind{2: dispatcher.KindInternal}},
			status: StatusFailed, reason: ReasonAborted, executed: 2, calls: 1,
			message: "step 2 (write.a) failed and its on_failure is abort",
		},
		{
			// The session says skip; step 2 says replan, and wins.
			name: "step_overrides_session",
			planner: &script{plans: [][]Step{
				{st(1, "write.a", `{}`), withFailure(st(2, "write.b", `{}`), OnFailureReplan), st(3, "write.c", `{}`)},
				{st(3, "write.c", `{}`)},
			}},
			d:       &fakeDispatcher{failStep: map[int]dispatcher.Kind{1: dispatcher.KindInternal, 2: dispatcher.KindSchema}},
			session: OnFailureSkip,
			status:  StatusCompleted, reason: ReasonGoalMet, executed: 3, calls: 2,
		},
		{
			// budget_exceeded is fatal whatever the step says.
			name: "skip_is_not_fatal_proof",
			planner: &script{plans: [][]Step{
				{withFailure(st(1, "write.a", `{}`), OnFailureSkip), st(2, "write.b", `{}`)},
			}},
			d:      &fakeDispatcher{failStep: map[int]dispatcher.Kind{1: dispatcher.KindBudgetExceeded}},
			status: StatusFailed, reason: ReasonFatal, executed: 1, calls: 1,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := runWith(t, tt.d, tt.planner, tt.lim, tt.session)
			if res.Status != tt.status || res.Reason != tt.reason || res.StepsExecuted != tt.executed || len(tt.planner.seen) != tt.calls {
				t.Fatalf("session ended %s (%s) after %d steps and %d planner calls: %s; want %s (%s), %d steps, %d calls",
					res.Status, res.Reason, res.StepsExecuted, len(tt.planner.seen), res.Message, tt.status, tt.reason, tt.executed, tt.calls)
			}
			if !strings.Contains(res.Message, tt.message) {
				t.Errorf("message %q lacks %q", res.Message, tt.message)
			}
			var skipped []int
			for _, e := range res.Events {
				if e.Kind == EventStepSkipped {
					skipped = append(skipped, e.StepID)
					if e.Error == nil || e.Error.Kind != KindSkipped || !strings.Contains(e.Error.Message, "depends on step") {
						t.Errorf("step.skipped %d without its reason: %+v", e.StepID, e.Error)
					}
				}
			}
			if len(skipped) != len(tt.skipped) || (len(skipped) > 0 && !equalInts(skipped, tt.skipped)) {
				t.Errorf("skipped %v; want %v", skipped, tt.skipped)
			}
			for _, id := range tt.skipped {
				if h, ok := foldStep(res, id); !ok || h.Error == nil || h.Error.Kind != KindSkipped {
					t.Errorf("history of skipped step %d: %+v, %v; want it failed with kind skipped", id, h, ok)
				}
			}
			golden(t, "on_failure_"+tt.name, res)
		})
	}
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func foldStep(res SessionResult, id int) (Step, bool) {
	for _, s := range res.History {
		if s.ID == id {
			return s, true
		}
	}
	return Step{}, false
}

// A bad on_failure is refused clearly: in a step (invalid_plan, before
// anything runs), in a plan file, and in a Session.
func TestOnFailureValidated(t *testing.T) {
	_, verr := validate([]Step{withFailure(st(1, "write.a", `{}`), "retry")}, nil)
	if verr == nil || verr.Kind != KindInvalidPlan || !strings.Contains(verr.Error(), `on_failure "retry" is not a way forward: use "abort", "skip" or "replan"`) {
		t.Errorf("step: %v", verr)
	}
	_, err := ParseFile([]byte(`{"goal":"g","on_failure":"ignore","steps":[{"id":1,"tool_name":"a"}]}`))
	if !errors.Is(err, ErrInvalidPlan) || !strings.Contains(err.Error(), `plan file: on_failure "ignore" is not a way forward`) {
		t.Errorf("file: %v", err)
	}
	_, err = ParseFile([]byte(`{"goal":"g","steps":[{"id":1,"tool_name":"a","on_failure":"Skip"}]}`))
	if !errors.Is(err, ErrInvalidPlan) || !strings.Contains(err.Error(), `step 1: invalid_plan: on_failure "Skip"`) {
		t.Errorf("file step: %v", err)
	}
	f, err := ParseFile([]byte(`{"goal":"g","on_failure":"skip","steps":[{"id":1,"tool_name":"a","on_failure":"abort"}]}`))
	if err != nil || f.OnFailure != OnFailureSkip || f.Steps[0].OnFailure != OnFailureAbort {
		t.Errorf("valid file: %+v, %v", f, err)
	}
	e := New(Config{Dispatcher: &fakeDispatcher{}, Planner: Static(nil)})
	if _, err := e.Run(context.Background(), Session{Goal: "g", OnFailure: "never"}); err == nil || !strings.Contains(err.Error(), `session on_failure "never"`) {
		t.Errorf("session: %v", err)
	}
}

// In parallel, a step failing under skip stops nothing: the step beside
// it in flight finishes, its dependent is skipped, and a later
// independent step is dispatched.
func TestSkipInParallel(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		d := &fakeDispatcher{gated: true, failStep: map[int]dispatcher.Kind{1: dispatcher.KindTimeout}}
		plan := []Step{
			withFailure(st(1, "write.a", `{}`), OnFailureSkip),
			st(2, "write.b", `{}`),
			{ID: 3, ToolName: "write.c", Args: []byte(`{}`), DependsOn: []int{1}},
			st(4, "write.d", `{}`),
		}
		var res SessionResult
		finished := make(chan struct{})
		go func() {
			defer close(finished)
			res = runSession(t, d, Static(plan), "skip in parallel", Limits{MaxParallel: 2}, nil)
		}()
		for _, id := range []int{1, 4, 2} {
			synctest.Wait()
			d.release(id)
		}
		<-finished
		var kinds []string
		for _, e := range res.Events {
			if e.StepID != 0 {
				kinds = append(kinds, fmt.Sprintf("%d %s", e.StepID, e.Kind))
			}
		}
		want := "1 step.started,2 step.started,1 step.failed,3 step.skipped,4 step.started,4 step.succeeded,2 step.succeeded"
		if got := strings.Join(kinds, ","); got != want || res.Status != StatusCompleted || res.StepsExecuted != 3 {
			t.Fatalf("events %s\nwant   %s\nsession %s (%s) after %d steps: %s", got, want, res.Status, res.Reason, res.StepsExecuted, res.Message)
		}
	})
}
