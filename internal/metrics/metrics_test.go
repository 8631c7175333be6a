package metrics

import (
	"context"
	"io"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"

	"github.com/toolhost/toolhost/dispatcher"
	"github.com/toolhost/toolhost/events"
	"github.com/toolhost/toolhost/governor"
)

func TestMetricsFromEvents(t *testing.T) {
	bus := events.NewBus(nil)
	m := New(Gauges{InFlight: func() float64 { return 3 }, Tools: func() float64 { return 7 }})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { m.Follow(ctx, bus); close(done) }()
	for !bus.Enabled() { // until Follow has subscribed
		runtime.Gosched()
	}
	bus.Publish(dispatcher.EventAttempt, dispatcher.AttemptEvent{Tool: "t", Attempt: 1})
	bus.Publish(dispatcher.EventRetry, dispatcher.RetryEvent{Tool: "t", Attempt: 1, Reason: dispatcher.KindTransient})
	bus.Publish(dispatcher.EventAttempt, dispatcher.AttemptEvent{Tool: "t", Attempt: 2})
	bus.Publish(dispatcher.EventResult, dispatcher.ResultEvent{Tool: "t", OK: true, Attempts: 2, DurationMS: 120})
	bus.Publish(dispatcher.EventResult, dispatcher.ResultEvent{Tool: "t", Kind: dispatcher.KindTimeout, Attempts: 1, DurationMS: 2000})
	bus.Publish(dispatcher.EventResult, dispatcher.ResultEvent{Tool: "t", Kind: dispatcher.KindInternal, Attempts: 1, Cancelled: true})
	bus.Publish(dispatcher.EventBreaker, dispatcher.BreakerEvent{Tool: "t", From: "closed", To: "open"})
	bus.Publish(governor.EventState, governor.State{Quota: "api", Used: 90, Capacity: 100, Mode: governor.ModeThrottled, Available: 2.5, Waiting: 3,
		Agents: map[string]governor.AgentUsage{"triage-3": {Used: 60}, "gone": {Used: 5}, "": {Used: 25}}})
	// A state without agents (an acquire's) changes no agent series; the
	// next with agents drops the series of an agent that left the window.
	bus.Publish(governor.EventState, governor.State{Quota: "api", Used: 90, Capacity: 100, Mode: governor.ModeThrottled, Available: 2.5, Waiting: 3})
	bus.Publish(governor.EventState, governor.State{Quota: "api", Used: 90, Capacity: 100, Mode: governor.ModeThrottled, Available: 2.5, Waiting: 3,
		Agents: map[string]governor.AgentUsage{"triage-3": {Used: 60}, "": {Used: 25}, "bad\nname\x00": {Used: 5}}})
	// Follow counts each event as it is published: what the registry
	// shows now is final.
	cancel()
	<-done

	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	body, _ := io.ReadAll(rec.Body)
	for _, want := range []string{
		`toolhost_attempts_total{tool="t"} 2`,
		`toolhost_retries_total{reason="transient",tool="t"} 1`,
		`toolhost_calls_total{outcome="ok",tool="t"} 1`,
		`toolhost_calls_total{outcome="timeout",tool="t"} 1`,
		`toolhost_calls_total{outcome="cancelled",tool="t"} 1`,
		`toolhost_call_duration_seconds_count{tool="t"} 3`,
		`toolhost_breaker_state{tool="t"} 2`,
		`toolhost_instances_in_flight 3`,
		`toolhost_tools 7`,
		`go_goroutines`,
		`toolhost_governor_level{level="mode",quota="api"} 1`,
		`toolhost_governor_level{level="used",quota="api"} 90`,
		`toolhost_governor_level{level="available",quota="api"} 2.5`,
		`toolhost_governor_agent_used{agent="triage-3",quota="api"} 60`,
		`toolhost_governor_agent_used{agent="",quota="api"} 25`,
		"toolhost_governor_agent_used{agent=\"bad\uFFFDname\uFFFD\",quota=\"api\"} 5",
	} {
		if !strings.Contains(string(body), want) {
			t.Errorf("metrics lack %q", want)
		}
	}
	if strings.Contains(string(body), `agent="gone"`) {
		t.Errorf("an agent that left the window keeps its series:\n%s", body)
	}
}
