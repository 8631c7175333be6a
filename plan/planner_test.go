package plan

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/toolhost/toolhost/dispatcher"
)

func TestStatic(t *testing.T) {
	steps := []Step{st(1, "a", `{}`)}
	p := Static(steps)
	steps[0].ToolName = "changed" // Static keeps its own copy
	got, err := p.Plan(context.Background(), Input{Goal: "g"})
	if err != nil || len(got) != 1 || got[0].ToolName != "a" {
		t.Fatalf("first call: %+v, %v", got, err)
	}
	got, err = p.Plan(context.Background(), Input{Goal: "g", LastError: &Error{Kind: "schema"}})
	if err != nil || got != nil {
		t.Fatalf("replan: %+v, %v; want nothing", got, err)
	}
}

func TestRules(t *testing.T) {
	kind := func(k dispatcher.Kind) *Error { return &Error{Kind: ErrorKind(k), StepID: 3} }
	tests := []struct {
		name  string
		in    Input
		tools []string
		ids   []int
	}{
		{"first", Input{Goal: "g", NextID: 1}, []string{"text.count", "text.slug", "hash.sha256", "math.eval"}, []int{1, 2, 3, 4}},
		{"not_found routes around", Input{Goal: "g", NextID: 5, LastError: kind(dispatcher.KindNotFound)},
			[]string{"text.count", "text.case", "math.eval"}, []int{5, 6, 7}},
		{"circuit_open routes around", Input{Goal: "g", NextID: 9, LastError: kind(dispatcher.KindCircuitOpen)},
			[]string{"text.count", "text.case", "math.eval"}, []int{9, 10, 11}},
		{"schema gives up", Input{Goal: "g", NextID: 5, LastError: kind(dispatcher.KindSchema)},
			[]string{"text.count", "text.case"}, []int{5, 6}},
		{"invalid_plan gives up", Input{Goal: "g", NextID: 5, LastError: &Error{Kind: KindInvalidPlan}},
			[]string{"text.count", "text.case"}, []int{5, 6}},
		{"transient: nothing", Input{Goal: "g", NextID: 5, LastError: kind(dispatcher.KindTransient)}, nil, nil},
		{"internal: nothing", Input{Goal: "g", NextID: 5, LastError: kind(dispatcher.KindInternal)}, nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Rules().Plan(context.Background(), tt.in)
			if err != nil {
				t.Fatal(err)
			}
			var tools []string
			var ids []int
			for _, s := range got {
				tools, ids = append(tools, s.ToolName), append(ids, s.ID)
			}
			if strings.Join(tools, ",") != strings.Join(tt.tools, ",") || len(ids) != len(tt.ids) {
				t.Fatalf("plan %v %v, want %v %v", ids, tools, tt.ids, tt.tools)
			}
			for i := range ids {
				if ids[i] != tt.ids[i] {
					t.Fatalf("ids %v, want %v", ids, tt.ids)
				}
			}
			// Every rule plan is valid for a session at that point.
			hist := map[int]*Step{}
			for id := 1; id < tt.in.NextID; id++ {
				hist[id] = &Step{ID: id, Result: json.RawMessage(`{}`)}
			}
			if _, err := validate(got, &known{history: hist, nextID: max(tt.in.NextID, 1)}); err != nil {
				t.Errorf("rule plan is invalid: %v", err)
			}
		})
	}
	again, _ := Rules().Plan(context.Background(), Input{Goal: "g", NextID: 1})
	first, _ := Rules().Plan(context.Background(), Input{Goal: "g", NextID: 1})
	a, _ := json.Marshal(again)
	b, _ := json.Marshal(first)
	if string(a) != string(b) {
		t.Error("the rule planner is not deterministic")
	}
}

type rawFunc func(ctx context.Context, in []byte) ([]byte, error)

func (f rawFunc) Plan(ctx context.Context, in []byte) ([]byte, error) { return f(ctx, in) }

func TestJSONPlanner(t *testing.T) {
	var seen []byte
	reply := ""
	p := JSON(rawFunc(func(_ context.Context, in []byte) ([]byte, error) {
		seen = in
		return []byte(reply), nil
	}))
	tests := []struct {
		reply string
		n     int
		err   string
	}{
		{`{"steps":[{"id":1,"tool_name":"t","args":{"a":1}}]}`, 1, ""},
		{`{"steps":[]}`, 0, ""},
		{` {"steps": null} `, 0, `neither "steps" nor "error"`},
		{`{"error":{"message":"upstream 429"}}`, 0, "the planner reported: upstream 429"},
		{`{"steps":[],"error":{"message":"x"}}`, 0, `both "steps" and "error"`},
		{`{}`, 0, `neither "steps" nor "error"`},
		{`{"steps":[],"extra":1}`, 0, `unknown field "extra"`},
		{`{"steps":[]} x`, 0, "trailing data"},
		{`[1]`, 0, "planner output is not"},
		{``, 0, "planner output is not"},
	}
	for _, tt := range tests {
		reply = tt.reply
		got, err := p.Plan(context.Background(), Input{Goal: "g", NextID: 1})
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("reply %q: %v, %v; want error %q", tt.reply, got, err, tt.err)
			}
			continue
		}
		if err != nil || len(got) != tt.n {
			t.Errorf("reply %q: %+v, %v", tt.reply, got, err)
		}
	}
	want := `{"goal":"g","history":[],"last_error":null,"pending":[],"next_id":1}`
	if string(seen) != want {
		t.Errorf("planner input %s, want %s", seen, want)
	}
}
