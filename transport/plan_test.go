package transport_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolhost/toolhost/abi"
	"github.com/toolhost/toolhost/dispatcher"
	"github.com/toolhost/toolhost/events"
	"github.com/toolhost/toolhost/plan"
	"github.com/toolhost/toolhost/registry"
	"github.com/toolhost/toolhost/transport"
)

// planServer serves two tools, text.count (read-only) and fail.schema,
// with toolhost.plan enabled when opts is set, and returns a client whose
// progress notifications arrive on the channel.
func planServer(t *testing.T, opts *transport.PlanOptions) (*mcp.ClientSession, <-chan *mcp.ProgressNotificationParams) {
	t.Helper()
	obj := json.RawMessage(`{"type":"object"}`)
	reg, err := registry.New([]*registry.Tool{
		{Name: "text.count", InputSchema: obj, Timeout: time.Second, ReadOnly: true,
			Handler: registry.HandlerFunc(func(_ context.Context, args json.RawMessage) (json.RawMessage, error) {
				var in struct{ Text string }
				_ = json.Unmarshal(args, &in)
				return json.Marshal(map[string]int{"words": len(strings.Fields(in.Text))})
			})},
		{Name: "fail.schema", InputSchema: obj, Timeout: time.Second,
			Handler: registry.HandlerFunc(func(context.Context, json.RawMessage) (json.RawMessage, error) {
				return nil, &abi.Error{Kind: abi.KindSchema, Message: "bad input"}
			})},
	})
	if err != nil {
		t.Fatal(err)
	}
	srv := transport.New(dispatcher.New(reg, dispatcher.Config{}), reg, transport.Options{Plans: opts})
	ct, st := mcp.NewInMemoryTransports()
	ctx := context.Background()
	ss, err := srv.MCP().Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ss.Close() })
	progress := make(chan *mcp.ProgressNotificationParams, 256)
	client := mcp.NewClient(&mcp.Implementation{Name: "plan-test", Version: "test"}, &mcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
			progress <- req.Params
		}})
	cs, err := client.Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs, progress
}

func callPlan(t *testing.T, cs *mcp.ClientSession, args string) (*mcp.CallToolResult, plan.SessionResult) {
	t.Helper()
	p := &mcp.CallToolParams{Name: transport.PlanToolName, Arguments: json.RawMessage(args)}
	p.SetProgressToken("tok")
	res, err := cs.CallTool(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	var sr plan.SessionResult
	if res.StructuredContent != nil {
		b, _ := json.Marshal(res.StructuredContent)
		if err := json.Unmarshal(b, &sr); err != nil {
			t.Fatal(err)
		}
	}
	return res, sr
}

func TestPlanTool(t *testing.T) {
	bus := events.NewBus(nil)
	sub := bus.Subscribe(256, "session.")
	defer sub.Close()
	cs, progress := planServer(t, &transport.PlanOptions{Events: bus, MaxSteps: 3})

	var listed *mcp.Tool
	for tool, err := range cs.Tools(context.Background(), nil) {
		if err != nil {
			t.Fatal(err)
		}
		if tool.Name == transport.PlanWireName && tool.Meta[transport.MetaToolName] == transport.PlanToolName {
			listed = tool
		}
	}
	if listed == nil {
		t.Fatal("toolhost.plan is not listed")
	}
	schema, _ := json.Marshal(listed.InputSchema)
	for _, want := range []string{`"type":"object"`, `"goal"`, `"steps"`, `"planner"`, `"$defs"`} {
		if !strings.Contains(string(schema), want) {
			t.Errorf("input schema lacks %s: %s", want, schema)
		}
	}

	res, sr := callPlan(t, cs, `{"goal":"count","steps":[
		{"id":1,"tool_name":"text.count","args":{"text":"a b c"}},
		{"id":2,"tool_name":"text.count","args":{"text":"a b c"}}]}`)
	if res.IsError || sr.Status != plan.StatusCompleted || sr.StepsExecuted != 1 || sr.History[1].ReusedFrom != 1 {
		t.Fatalf("result %+v", sr)
	}
	if sr.Limits.MaxSteps != 3 {
		t.Errorf("max_steps %d; want the operator's cap 3", sr.Limits.MaxSteps)
	}
	// Every event came as a progress notification, in order, and the
	// events they carry fold to the result.
	var evs []plan.Event
	for range sr.Events {
		var n *mcp.ProgressNotificationParams
		select {
		case n = <-progress:
		case <-time.After(10 * time.Second):
			t.Fatalf("only %d of %d progress notifications arrived", len(evs), len(sr.Events))
		}
		b, _ := json.Marshal(n.Meta[transport.MetaPlanEvent])
		var e plan.Event
		if err := json.Unmarshal(b, &e); err != nil {
			t.Fatal(err)
		}
		if n.ProgressToken != "tok" || n.Progress != float64(e.Seq) || n.Message == "" {
			t.Errorf("notification %+v", n)
		}
		evs = append(evs, e)
	}
	a, _ := json.Marshal(plan.Fold(evs))
	b, _ := json.Marshal(sr)
	if string(a) != string(b) {
		t.Errorf("fold of the notified events differs from the result:\n%s\n%s", a, b)
	}
	if e := <-sub.C; e.Type != string(plan.EventSessionStart) {
		t.Errorf("bus got %s first", e.Type)
	}

	res, sr = callPlan(t, cs, `{"goal":"fail","steps":[{"id":1,"tool_name":"fail.schema"}]}`)
	if !res.IsError || sr.Reason != plan.ReasonNoPlan || !strings.Contains(res.Content[0].(*mcp.TextContent).Text, "no_plan") {
		t.Errorf("failed session: isError %v, %+v", res.IsError, sr)
	}
	// The file's on_failure reaches the session: under skip the failure
	// stays in the history and the rest runs; under abort the session
	// ends there.
	res, sr = callPlan(t, cs, `{"goal":"skip","on_failure":"skip","steps":[{"id":1,"tool_name":"fail.schema"},{"id":2,"tool_name":"text.count","args":{"text":"x"}}]}`)
	if res.IsError || sr.Status != plan.StatusCompleted || len(sr.History) != 2 || sr.History[0].Error == nil || sr.History[1].Result == nil {
		t.Errorf("on_failure skip: isError %v, %+v", res.IsError, sr)
	}
	res, sr = callPlan(t, cs, `{"goal":"abort","steps":[{"id":1,"tool_name":"fail.schema","on_failure":"abort"},{"id":2,"tool_name":"text.count"}]}`)
	if !res.IsError || sr.Reason != plan.ReasonAborted || sr.StepsExecuted != 1 {
		t.Errorf("on_failure abort: isError %v, %+v", res.IsError, sr)
	}
	res, sr = callPlan(t, cs, `{"goal":"g","planner":"rules"}`)
	if !res.IsError || sr.Status != plan.StatusFailed || sr.Revisions[0].Steps[0].ToolName != "text.count" {
		t.Errorf("rules planner without its tools: isError %v, %s (%s)", res.IsError, sr.Status, sr.Reason)
	}
	for _, bad := range []string{`{"goal":"g","planner":"llm"}`, `{"steps":[]}`, `[1]`, `{"goal":"g","on_failure":"maybe"}`, `{"goal":"g","steps":[{"id":1,"tool_name":"x","args":{"a":{"$ref":"/steps/2/result"}}}]}`} {
		res, _ := callPlan(t, cs, bad)
		de, _ := json.Marshal(res.Meta[transport.MetaError])
		if !res.IsError || !strings.Contains(string(de), `"kind":"schema"`) {
			t.Errorf("arguments %s: isError %v, envelope %s", bad, res.IsError, de)
		}
	}
}

func TestPlanToolOff(t *testing.T) {
	cs, _ := planServer(t, nil)
	for tool, err := range cs.Tools(context.Background(), nil) {
		if err != nil {
			t.Fatal(err)
		}
		if tool.Name == transport.PlanWireName || tool.Name == transport.PlanToolName {
			t.Fatal("toolhost.plan is listed although Options.Plans is nil")
		}
	}
	res, _ := callPlan(t, cs, `{"goal":"g"}`)
	de, _ := json.Marshal(res.Meta[transport.MetaError])
	if !res.IsError || !strings.Contains(string(de), `"kind":"not_found"`) {
		t.Errorf("calling the disabled tool: %s", de)
	}
}
