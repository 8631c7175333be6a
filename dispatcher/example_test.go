package dispatcher_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/toolhost/toolhost/abi"
	"github.com/toolhost/toolhost/dispatcher"
	"github.com/toolhost/toolhost/registry"
)

// A tool that fails transiently on its first call: the dispatcher retries
// it, and the caller only sees the result.
func ExampleDispatcher_Call() {
	calls := 0
	flaky := registry.HandlerFunc(func(context.Context, json.RawMessage) (json.RawMessage, error) {
		calls++
		if calls == 1 {
			return nil, &abi.Error{Kind: abi.KindTransient, Message: "upstream 503"}
		}
		return json.RawMessage(`{"temperature":21}`), nil
	})
	reg, _ := registry.New([]*registry.Tool{{
		Name: "weather.now", Timeout: time.Second, Handler: flaky,
		InputSchema: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}`),
	}})
	d := dispatcher.New(reg, dispatcher.Config{})

	res, err := d.Call(context.Background(), dispatcher.Call{Tool: "weather.now", Args: json.RawMessage(`{"city":"Oslo"}`)})
	fmt.Println(string(res), err, "after", calls, "attempts")

	_, err = d.Call(context.Background(), dispatcher.Call{Tool: "weather.now", Args: json.RawMessage(`{}`)})
	var de *dispatcher.DispatchError
	if errors.As(err, &de) {
		fmt.Println(de.Kind, de.JSONRPCCode, errors.Is(err, dispatcher.ErrSchema))
	}
	// Output:
	// {"temperature":21} <nil> after 2 attempts
	// schema -32602 true
}

// GatherBounded runs a fan-out with a cap and keeps input order.
func ExampleDispatcher_GatherBounded() {
	double := registry.HandlerFunc(func(_ context.Context, args json.RawMessage) (json.RawMessage, error) {
		var in struct{ N int }
		_ = json.Unmarshal(args, &in)
		return json.Marshal(in.N * 2)
	})
	reg, _ := registry.New([]*registry.Tool{{Name: "double", Timeout: time.Second, Handler: double,
		InputSchema: json.RawMessage(`{"type":"object"}`)}})
	d := dispatcher.New(reg, dispatcher.Config{})
	var calls []dispatcher.Call
	for i := 1; i <= 5; i++ {
		calls = append(calls, dispatcher.Call{Tool: "double", Args: json.RawMessage(fmt.Sprintf(`{"n":%d}`, i))})
	}
	for _, r := range d.GatherBounded(context.Background(), calls, 2) {
		fmt.Print(string(r.Result), " ")
	}
	fmt.Println()
	// Output: 2 4 6 8 10
}
