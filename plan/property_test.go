package plan

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolhost/toolhost/dispatcher"
)

// randomPlanner invents plans: fresh and pending ids, references to
// earlier results (some that resolve, some that do not, some to later or
// failed steps), depends_on, repeats of steps that already succeeded, and
// sometimes nothing. It checks, on every call, that its input is the fold
// of the log so far.
type randomPlanner struct {
	t   *testing.T
	rnd *rand.Rand
	log *[]Event
}

var tools = []string{"text.count", "text.slug", "math.eval", "write.a", "write.b"}

func (p *randomPlanner) Plan(_ context.Context, in Input) ([]Step, error) {
	now := Fold(*p.log)
	if !reflect.DeepEqual(now.History, in.History) {
		p.t.Errorf("planner got a history that is not the fold of the log:\n got %+v\nwant %+v", in.History, now.History)
	}
	r := p.rnd
	if r.IntN(8) == 0 {
		return nil, nil
	}
	var steps []Step
	id := 0
	for _, s := range in.Pending { // keep or revise some pending steps
		if r.IntN(2) == 0 {
			if r.IntN(3) == 0 {
				s.Args = json.RawMessage(fmt.Sprintf(`{"n":%d}`, r.IntN(3)))
			}
			steps = append(steps, s)
			id = s.ID
		}
	}
	id = max(id+1, in.NextID)
	if r.IntN(10) == 0 {
		id = max(id-2, 1) // maybe an id that may not be used
	}
	for range r.IntN(6) {
		s := Step{ID: id, ToolName: tools[r.IntN(len(tools))]}
		args := map[string]any{"n": r.IntN(3)}
		switch r.IntN(6) {
		case 0: // refer to an earlier step's whole result
			if target := p.earlier(steps, in.History); target > 0 {
				args["x"] = map[string]any{"$ref": fmt.Sprintf("/steps/%d/result", target)}
			}
		case 1: // a pointer that may not resolve, or a later step
			args["x"] = map[string]any{"$ref": fmt.Sprintf("/steps/%d/result/words", id-r.IntN(3)+r.IntN(2))}
		case 2: // repeat a step that ran
			if len(in.History) > 0 {
				h := in.History[r.IntN(len(in.History))]
				s.ToolName, s.Args = h.ToolName, h.Args
			}
		case 3:
			if target := p.earlier(steps, in.History); target > 0 {
				s.DependsOn = []int{target}
			}
		}
		if s.Args == nil {
			s.Args, _ = json.Marshal(args)
		}
		steps = append(steps, s)
		id += 1 + r.IntN(2)
	}
	return steps, nil
}

func (p *randomPlanner) earlier(steps []Step, history []Step) int {
	var ids []int
	for _, s := range steps {
		ids = append(ids, s.ID)
	}
	for _, h := range history {
		ids = append(ids, h.ID)
	}
	if len(ids) == 0 {
		return 0
	}
	return ids[p.rnd.IntN(len(ids))]
}

// randomDispatcher fails some steps (decided per step id and seed) and
// counts concurrency and dispatches per identity.
type randomDispatcher struct {
	seed uint64
	mu   sync.Mutex
	n    int
	cur  int
	peak int
}

var failKinds = []dispatcher.Kind{dispatcher.KindSchema, dispatcher.KindNotFound, dispatcher.KindTransient,
	dispatcher.KindTimeout, dispatcher.KindInternal, dispatcher.KindCircuitOpen, dispatcher.KindBudgetExceeded}

func (d *randomDispatcher) Call(ctx context.Context, c dispatcher.Call) (json.RawMessage, error) {
	d.mu.Lock()
	d.n++
	d.cur++
	d.peak = max(d.peak, d.cur)
	d.mu.Unlock()
	defer func() {
		d.mu.Lock()
		d.cur--
		d.mu.Unlock()
	}()
	id := keyStep(c.IdempotencyKey)
	r := rand.New(rand.NewPCG(d.seed, uint64(id)))
	if r.IntN(4) == 0 {
		k := failKinds[r.IntN(len(failKinds))]
		if k == dispatcher.KindBudgetExceeded && r.IntN(3) != 0 {
			k = dispatcher.KindSchema // keep fatal endings rarer
		}
		return nil, fakeError(k, c.Tool)
	}
	return answer(c.Tool, c.Args), nil
}

func TestProperties(t *testing.T) {
	for seed := range uint64(1000) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			t.Parallel()
			checkSession(t, seed)
		})
	}
}

func checkSession(t *testing.T, seed uint64) {
	r := rand.New(rand.NewPCG(seed, 1))
	lim := Limits{MaxSteps: 1 + r.IntN(15), MaxReplans: r.IntN(6) - 1, MaxParallel: 1 + r.IntN(4)}
	// Observe and Plan are both called from the session's goroutine, so
	// the planner can read the log without a lock.
	var log []Event
	planner := &randomPlanner{t: t, rnd: rand.New(rand.NewPCG(seed, 2)), log: &log}
	d := &randomDispatcher{seed: seed}
	cfg := Config{Dispatcher: d, Planner: planner, Reusable: reusable, Now: func() time.Time { return time.Time{} },
		Observe: func(e Event) { log = append(log, e) }}
	res, err := New(cfg).Run(context.Background(), Session{ID: "p", Goal: "random", Limits: lim})
	if err != nil {
		t.Fatal(err)
	}
	lim = lim.resolve()

	// Budgets are never exceeded.
	if res.StepsExecuted > lim.MaxSteps || d.n != res.StepsExecuted {
		t.Errorf("%d steps executed (%d dispatches), budget %d", res.StepsExecuted, d.n, lim.MaxSteps)
	}
	if res.Replans > lim.MaxReplans {
		t.Errorf("%d replans, budget %d", res.Replans, lim.MaxReplans)
	}
	if d.peak > lim.MaxParallel {
		t.Errorf("%d calls in flight, limit %d", d.peak, lim.MaxParallel)
	}
	// The log is well formed and is the result.
	checkLog(t, res, lim)
	var buf bytes.Buffer
	for _, e := range res.Events {
		if err := WriteJSONL(&buf, e); err != nil {
			t.Fatal(err)
		}
	}
	back, err := ReadJSONL(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if got := Fold(back); !reflect.DeepEqual(got, res) {
		t.Errorf("fold of the JSONL log differs from the result")
	}
	if !reflect.DeepEqual(log, res.Events) {
		t.Errorf("observed events differ from the result's")
	}
	if t.Failed() {
		t.Logf("limits %+v; log:\n%s", lim, buf.String())
	}
}

// checkLog checks the invariants a log must satisfy.
func checkLog(t *testing.T, res SessionResult, lim Limits) {
	t.Helper()
	evs := res.Events
	if len(evs) < 2 || evs[0].Kind != EventSessionStart || evs[len(evs)-1].Kind != EventSessionEnd {
		t.Fatalf("log does not run from session.start to session.end")
	}
	plan := map[int]Step{}
	ran := map[int]bool{}
	succeeded := map[string]bool{}
	running := map[int]string{}
	keys := map[string]bool{}
	for i, e := range evs {
		if e.Seq != uint64(i+1) {
			t.Errorf("event %d has seq %d", i, e.Seq)
		}
		switch e.Kind {
		case EventPlanDiff:
			plan = map[int]Step{}
			for _, s := range e.Steps {
				if ran[s.ID] {
					t.Errorf("revision %d reuses id %d of a step that ran", e.Revision, s.ID)
				}
				plan[s.ID] = s
			}
		case EventStepStarted, EventStepReused:
			if _, ok := plan[e.StepID]; !ok {
				t.Errorf("step %d is not in revision %d", e.StepID, e.Revision)
			}
			if ran[e.StepID] {
				t.Errorf("step %d ran twice", e.StepID)
			}
			ran[e.StepID] = true
			if e.Kind == EventStepReused {
				continue
			}
			id, _ := identity(e.ToolName, e.Args)
			if reusable(e.ToolName) {
				if succeeded[id] {
					t.Errorf("step %d (%s) ran although an identical step had succeeded", e.StepID, e.ToolName)
				}
				for other, oid := range running {
					if oid == id {
						t.Errorf("step %d (%s) ran while identical step %d was in flight", e.StepID, e.ToolName, other)
					}
				}
			}
			running[e.StepID] = id
			if keys[e.Key] || len(e.Key) > 255 || !strings.HasPrefix(e.Key, fmt.Sprintf("p:%d:%s:", e.StepID, e.ToolName)) {
				t.Errorf("bad or repeated key %q", e.Key)
			}
			keys[e.Key] = true
		case EventStepSucceeded:
			succeeded[running[e.StepID]] = true
			delete(running, e.StepID)
		case EventStepFailed:
			ran[e.StepID] = true
			delete(running, e.StepID)
		}
	}
	switch res.Reason {
	case ReasonGoalMet:
		if res.Status != StatusCompleted {
			t.Errorf("goal_met with status %s", res.Status)
		}
		last := res.Revisions[len(res.Revisions)-1]
		for _, s := range last.Steps {
			if h := res.History[indexOf(res.History, s.ID)]; h.Error != nil {
				t.Errorf("goal met but step %d failed", s.ID)
			}
		}
	case ReasonStepBudget:
		if res.StepsExecuted != lim.MaxSteps {
			t.Errorf("step_budget after %d of %d steps", res.StepsExecuted, lim.MaxSteps)
		}
	case ReasonReplanBudget:
		if res.Replans != lim.MaxReplans {
			t.Errorf("replan_budget after %d of %d replans", res.Replans, lim.MaxReplans)
		}
	case ReasonNoPlan, ReasonFatal:
	default:
		t.Errorf("unexpected reason %q", res.Reason)
	}
	if res.Status == StatusCompleted && res.Reason != ReasonGoalMet {
		t.Errorf("completed with reason %s", res.Reason)
	}
}

func indexOf(h []Step, id int) int {
	for i, s := range h {
		if s.ID == id {
			return i
		}
	}
	panic(fmt.Sprintf("step %d not in history", id))
}
