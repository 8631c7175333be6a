package plan

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"testing/synctest"
	"time"

	"github.com/toolhost/toolhost/dispatcher"
)

var update = flag.Bool("update", false, "rewrite the golden event logs in testdata/golden")

// golden compares a session's event log with testdata/golden/NAME.jsonl
// (rewritten with -update) and checks that folding the log read back from
// the file gives the same result.
func golden(t *testing.T, name string, res SessionResult) {
	t.Helper()
	var buf bytes.Buffer
	for _, e := range res.Events {
		if err := WriteJSONL(&buf, e); err != nil {
			t.Fatal(err)
		}
	}
	path := filepath.Join("testdata", "golden", name+".jsonl")
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./plan -run Golden -update to create it)", err)
	}
	if !bytes.Equal(buf.Bytes(), want) {
		t.Errorf("event log differs from %s (go test ./plan -run Golden -update rewrites it)\n--- got\n%s--- want\n%s", path, buf.Bytes(), want)
	}
	evs, err := ReadJSONL(bytes.NewReader(want))
	if err != nil {
		t.Fatal(err)
	}
	assertSameResult(t, Fold(evs), res)
}

func TestGolden(t *testing.T) {
	count := `{"text":"plan execute replan"}`
	tests := []struct {
		name    string
		planner Planner
		d       *fakeDispatcher
		lim     Limits
		status  Status
		reason  Reason
	}{
		{
			name: "linear_success",
			planner: Static([]Step{
				st(1, "text.count", count),
				st(2, "text.slug", `{"text":"plan execute replan"}`),
				st(3, "math.eval", `{"expr":"w*2","vars":{"w":{"$ref":"/steps/1/result/words"}}}`),
			}),
			d:      &fakeDispatcher{},
			status: StatusCompleted, reason: ReasonGoalMet,
		},
		{
			// Step 2 fails; the planner revises step 3, keeps 4 and adds
			// 5, and the session completes.
			name: "one_replan",
			planner: &script{plans: [][]Step{
				{st(1, "text.count", count), st(2, "json.get", `{"doc":{},"pointer":"/x"}`), st(3, "math.eval", `{"expr":"1"}`), st(4, "text.case", `{"text":"a","to":"upper"}`)},
				{st(3, "math.eval", `{"expr":"2"}`), st(4, "text.case", `{"text":"a","to":"upper"}`), st(5, "text.slug", `{"text":"b"}`)},
			}},
			d:      &fakeDispatcher{failStep: map[int]dispatcher.Kind{2: dispatcher.KindSchema}},
			status: StatusCompleted, reason: ReasonGoalMet,
		},
		{
			name: "two_replans",
			planner: &script{plans: [][]Step{
				{st(1, "text.count", count), st(2, "hash.sha256", `{"text":"x"}`), st(3, "math.eval", `{"expr":"1"}`)},
				{st(4, "hash.md5", `{"text":"x"}`), st(5, "math.eval", `{"expr":"1"}`)},
				{st(6, "text.slug", `{"text":"x"}`), st(7, "math.eval", `{"expr":"1"}`)},
			}},
			d: &fakeDispatcher{failTool: map[string]dispatcher.Kind{
				"hash.sha256": dispatcher.KindTransient, "hash.md5": dispatcher.KindNotFound}},
			status: StatusCompleted, reason: ReasonGoalMet,
		},
		{
			name:    "replan_budget",
			planner: Rules(),
			d:       &fakeDispatcher{failTool: map[string]dispatcher.Kind{"math.eval": dispatcher.KindNotFound, "hash.sha256": dispatcher.KindNotFound}},
			lim:     Limits{MaxReplans: 2},
			status:  StatusFailed, reason: ReasonReplanBudget,
		},
		{
			// The 13-execution example: six steps run (the sixth fails),
			// the replan's first six run (twelve in all), and the
			// thirteenth is refused.
			name: "step_budget",
			planner: &script{plans: [][]Step{
				{st(1, "write.a", `{}`), st(2, "write.b", `{}`), st(3, "write.c", `{}`), st(4, "write.d", `{}`), st(5, "write.e", `{}`), st(6, "write.f", `{}`)},
				{st(7, "write.g", `{}`), st(8, "write.h", `{}`), st(9, "write.i", `{}`), st(10, "write.j", `{}`), st(11, "write.k", `{}`), st(12, "write.l", `{}`), st(13, "write.m", `{}`)},
			}},
			d:      &fakeDispatcher{failStep: map[int]dispatcher.Kind{6: dispatcher.KindTimeout}},
			status: StatusFailed, reason: ReasonStepBudget,
		},
		{
			name:    "no_plan",
			planner: Static([]Step{st(1, "text.count", count), st(2, "write.file", `{"path":"/tmp/x"}`), st(3, "text.slug", `{"text":"x"}`)}),
			d:       &fakeDispatcher{failStep: map[int]dispatcher.Kind{2: dispatcher.KindInternal}},
			status:  StatusFailed, reason: ReasonNoPlan,
		},
		{
			// The first plan refers to a later step and is rejected
			// before anything runs; the second refers to a step that
			// failed and is rejected too; the third completes.
			name: "invalid_plan",
			planner: &script{plans: [][]Step{
				{st(1, "text.count", `{"text":{"$ref":"/steps/2/result"}}`), st(2, "text.slug", `{"text":"x"}`)},
				{st(1, "text.count", count), st(2, "write.x", `{}`)},
				{st(3, "text.slug", `{"text":{"$ref":"/steps/2/result/slug"}}`)},
				{st(3, "text.slug", `{"text":{"$ref":"/steps/1/result/words"}}`)},
			}},
			d:      &fakeDispatcher{failStep: map[int]dispatcher.Kind{2: dispatcher.KindSchema}},
			status: StatusCompleted, reason: ReasonGoalMet,
		},
		{
			// hash.sha256 is missing: the rule planner routes around it,
			// and its text.count is answered from step 1 without running.
			name:    "reuse_after_replan",
			planner: Rules(),
			d:       &fakeDispatcher{failTool: map[string]dispatcher.Kind{"hash.sha256": dispatcher.KindNotFound}},
			status:  StatusCompleted, reason: ReasonGoalMet,
		},
		{
			name:    "fatal_budget_exceeded",
			planner: Rules(),
			d:       &fakeDispatcher{failStep: map[int]dispatcher.Kind{2: dispatcher.KindBudgetExceeded}},
			status:  StatusFailed, reason: ReasonFatal,
		},
		{
			name:    "give_up_gracefully",
			planner: Rules(),
			d:       &fakeDispatcher{failTool: map[string]dispatcher.Kind{"hash.sha256": dispatcher.KindSchema}},
			status:  StatusCompleted, reason: ReasonGoalMet,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := runSession(t, tt.d, tt.planner, "plan execute replan", tt.lim, nil)
			if res.Status != tt.status || res.Reason != tt.reason {
				t.Errorf("session ended %s (%s): %s; want %s (%s)", res.Status, res.Reason, res.Message, tt.status, tt.reason)
			}
			golden(t, tt.name, res)
		})
	}
}

// TestGoldenParallel scripts the completion order of a parallel run: step
// 1 and 3 start together; 3 finishes first, then 1, which makes 2 ready
// (it refers to 1) while 4 (depends on 3) is already running.
func TestGoldenParallel(t *testing.T) {
	plan := []Step{
		st(1, "text.count", `{"text":"one two"}`),
		st(2, "math.eval", `{"expr":"w","vars":{"w":{"$ref":"/steps/1/result/words"}}}`),
		st(3, "text.slug", `{"text":"three"}`),
		{ID: 4, ToolName: "text.case", Args: []byte(`{"text":"four","to":"upper"}`), DependsOn: []int{3}, ExpectedOutcome: "after 3"},
		st(5, "text.count", `{"text":"one two"}`), // identical to 1: reused, never run
	}
	synctest.Test(t, func(t *testing.T) {
		d := &fakeDispatcher{gated: true}
		var res SessionResult
		finished := make(chan struct{})
		go func() {
			defer close(finished)
			res = runSession(t, d, Static(plan), "in parallel", Limits{MaxParallel: 2}, nil)
		}()
		// Every call blocks on its gate, so after each Wait the executor
		// is idle: what it dispatched so far is fixed.
		for _, id := range []int{3, 1, 4, 2} {
			synctest.Wait()
			d.release(id)
		}
		<-finished
		if res.Status != StatusCompleted {
			t.Fatalf("session %s (%s): %s", res.Status, res.Reason, res.Message)
		}
		if d.peak != 2 {
			t.Errorf("peak in flight %d, want 2", d.peak)
		}
		golden(t, "parallel_scripted", res)
	})
}

// TestGoldenRetries runs steps through a real dispatcher whose tool fails
// transiently twice: the retries it publishes become step.retry events.
// synctest's clock makes the backoff instant and the log exact.
func TestGoldenRetries(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		d, bus := flakyDispatcher(t, 2)
		res := runSession(t, d, Static([]Step{st(1, "flaky", `{}`), st(2, "flaky", `{"again":true}`)}), "retry", Limits{},
			func(c *Config) { c.Bus = bus })
		if res.Status != StatusCompleted {
			t.Fatalf("session %s (%s): %s", res.Status, res.Reason, res.Message)
		}
		golden(t, "retries", res)
	})
}

// TestGoldenCancelled cancels the session while step 2 is in flight.
func TestGoldenCancelled(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		d := &fakeDispatcher{gated: true}
		ctx, cancel := context.WithCancel(context.Background())
		var res SessionResult
		finished := make(chan struct{})
		go func() {
			defer close(finished)
			cfg := Config{Dispatcher: d, Planner: Rules(), Now: func() time.Time { return time.Time{} }}
			res, _ = New(cfg).Run(ctx, Session{ID: "s1", Goal: "cancel me"})
		}()
		synctest.Wait()
		d.release(1)
		synctest.Wait()
		cancel()
		<-finished
		if res.Reason != ReasonCancelled || d.callCount() != 2 {
			t.Fatalf("session %s (%s) after %d calls: %s", res.Status, res.Reason, d.callCount(), res.Message)
		}
		golden(t, "cancelled", res)
	})
}

// assertSameResult compares two results as JSON documents.
func assertSameResult(t *testing.T, got, want SessionResult) {
	t.Helper()
	g, err := json.Marshal(got)
	if err != nil {
		t.Fatal(err)
	}
	w, err := json.Marshal(want)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(g, w) {
		t.Errorf("fold of the log differs from the result:\n got %s\nwant %s", g, w)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("fold of the log is not deeply equal to the result")
	}
}
