package host_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolhost/toolhost/host"
	"github.com/toolhost/toolhost/internal/testkit/testwasm"
)

var planner struct {
	once sync.Once
	p    *host.Planner
	err  error
}

// sharedPlanner is testdata/planner loaded once on the shared runtime.
func sharedPlanner(t *testing.T) *host.Planner {
	t.Helper()
	rt, _, _ := sharedRuntime(t)
	path := testwasm.Go(t, "./host/testdata/planner")
	planner.once.Do(func() {
		planner.p, planner.err = rt.LoadPlannerFile(context.Background(), path)
	})
	if planner.err != nil {
		t.Fatal(planner.err)
	}
	return planner.p
}

type planOut struct {
	Steps []struct {
		ID       int             `json:"id"`
		ToolName string          `json:"tool_name"`
		Args     json.RawMessage `json:"args"`
	} `json:"steps"`
	Error *struct {
		Message string `json:"message"`
	} `json:"error"`
}

func runPlanner(t *testing.T, p *host.Planner, ctx context.Context, input string) (planOut, error) {
	t.Helper()
	b, err := p.Plan(ctx, []byte(input))
	if err != nil {
		return planOut{}, err
	}
	var out planOut
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatalf("planner output %q: %v", b, err)
	}
	return out, nil
}

func TestPlanner(t *testing.T) {
	p := sharedPlanner(t)
	ctx := context.Background()
	out, err := runPlanner(t, p, ctx, `{"goal":"a b c","history":[],"last_error":null,"pending":[],"next_id":1}`)
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Steps) != 2 || out.Steps[0].ToolName != "text.count" || out.Steps[1].ID != 2 ||
		!strings.Contains(string(out.Steps[1].Args), `"$ref":"/steps/1/result/words"`) {
		t.Fatalf("first plan %+v", out)
	}
	out, err = runPlanner(t, p, ctx, `{"goal":"a b c","history":[],"last_error":{"kind":"not_found","message":"m","step_id":1},"pending":[],"next_id":3}`)
	if err != nil || len(out.Steps) != 1 || out.Steps[0].ToolName != "text.slug" || out.Steps[0].ID != 3 {
		t.Fatalf("replan %+v, %v", out, err)
	}
	out, err = runPlanner(t, p, ctx, `{"goal":"a","last_error":{"kind":"schema"},"next_id":3}`)
	if err != nil || out.Steps == nil || len(out.Steps) != 0 {
		t.Fatalf("no plan: %+v, %v; want {\"steps\":[]}", out, err)
	}
	// The input arrives intact.
	in := `{"goal":"echo","history":[{"id":1,"tool_name":"t","result":{"s":"é 😀 <&>"}}],"last_error":null,"pending":[],"next_id":2}`
	out, err = runPlanner(t, p, ctx, in)
	if err != nil || len(out.Steps) != 1 || !strings.Contains(string(out.Steps[0].Args), `"s":"é 😀 \u003c\u0026\u003e"`) {
		t.Fatalf("echo %+v, %v", out, err)
	}
	if p.SHA256() == "" || !strings.HasSuffix(p.Path(), ".wasm") {
		t.Errorf("identity %q %q", p.Path(), p.SHA256())
	}
}

// TestPlannerSandbox checks that a planner misbehaving is an error for
// that call, never a hang or a host crash, and that the next call works.
func TestPlannerSandbox(t *testing.T) {
	p := sharedPlanner(t)
	tests := []struct {
		goal    string
		fault   string // substring of a *host.Fault
		timeout bool   // the call's deadline ends it
		reports string // the guest answers {"error": ...} with this
	}{
		{goal: "spin", timeout: true},
		{goal: "sleep", timeout: true},
		{goal: "exit", fault: "guest exited with code 3"},
		{goal: "crash", fault: "toolhost_plan"},
		{goal: "huge", fault: "over the 1048576-byte output cap"},
		{goal: "panic", reports: "planner panicked: the planner gave up"},
		{goal: "error", reports: "no model available"},
	}
	for _, tt := range tests {
		t.Run(tt.goal, func(t *testing.T) {
			limit := 30 * time.Second
			if tt.timeout {
				limit = 300 * time.Millisecond
			}
			ctx, cancel := context.WithTimeout(context.Background(), limit)
			defer cancel()
			start := time.Now()
			out, err := runPlanner(t, p, ctx, `{"goal":"`+tt.goal+`","history":[],"last_error":null,"pending":[],"next_id":1}`)
			var fault *host.Fault
			switch {
			case tt.timeout:
				if !errors.Is(err, context.DeadlineExceeded) {
					t.Fatalf("got %+v, %v; want the deadline", out, err)
				}
				if took := time.Since(start); took > 5*time.Second {
					t.Errorf("took %v to stop", took)
				}
			case tt.fault != "":
				if !errors.As(err, &fault) || !strings.Contains(fault.Reason, tt.fault) {
					t.Fatalf("got %+v, %v; want a Fault saying %q", out, err, tt.fault)
				}
			default:
				if err != nil || out.Error == nil || !strings.Contains(out.Error.Message, tt.reports) {
					t.Fatalf("got %+v, %v; want the guest to report %q", out, err, tt.reports)
				}
			}
		})
	}
	if out, err := runPlanner(t, p, context.Background(), `{"goal":"fine","next_id":1}`); err != nil || len(out.Steps) != 2 {
		t.Fatalf("after the misbehaviour: %+v, %v", out, err)
	}
}

func TestPlannerConcurrent(t *testing.T) {
	p := sharedPlanner(t)
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			out, err := runPlanner(t, p, context.Background(), `{"goal":"w`+strings.Repeat(" w", i)+`","next_id":1}`)
			if err != nil || len(out.Steps) != 2 || !strings.Contains(string(out.Steps[0].Args), strings.Repeat(" w", i)) {
				t.Errorf("call %d: %+v, %v", i, out, err)
			}
		})
	}
	wg.Wait()
}

func TestLoadPlannerErrors(t *testing.T) {
	rt, _, _ := sharedRuntime(t)
	ctx := context.Background()
	tests := []struct {
		name, path string
		wasm       []byte
		reason     string
	}{
		{name: "a tool module", path: misbehavePath, reason: "not a planner: missing export toolhost_plan"},
		{name: "ABI version 2", path: testwasm.WAT(t, "host/testdata/planner/version2.wat"), reason: "ABI version 2, this host speaks version 1"},
		{name: "not wasm", path: "junk.wasm", wasm: []byte("junk"), reason: "not a valid WebAssembly module"},
		{name: "no file", path: "/nonexistent/planner.wasm", reason: "cannot read"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var err error
			if tt.wasm != nil {
				_, err = rt.LoadPlanner(ctx, tt.path, tt.wasm)
			} else {
				_, err = rt.LoadPlannerFile(ctx, tt.path)
			}
			var le *host.LoadError
			if !errors.As(err, &le) || le.Path != tt.path || !strings.Contains(le.Reason, tt.reason) {
				t.Fatalf("got %v; want a LoadError for %s saying %q", err, tt.path, tt.reason)
			}
		})
	}
}
