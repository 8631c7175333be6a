package main

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"

	"github.com/toolhost/toolhost/events"
	"github.com/toolhost/toolhost/plan"
)

// Plan step arguments and results reach serve's log only with --audit-args
// (the events themselves are the bus's business; this is what is logged).
func TestBusLogKeepsPlanArgsOutWithoutAuditArgs(t *testing.T) {
	publish := func(auditArgs bool) string {
		var buf bytes.Buffer
		bus := events.NewBus(busLogger(slog.New(slog.NewJSONHandler(&buf, nil)), auditArgs))
		secret := json.RawMessage(`{"key":"s3cr3t-arg"}`)
		result := json.RawMessage(`{"token":"s3cr3t-result"}`)
		bus.Publish(string(plan.EventStepStarted), plan.Event{Kind: plan.EventStepStarted, ToolName: "hmac.sign", Args: secret})
		bus.Publish(string(plan.EventStepSucceeded), &plan.Event{Kind: plan.EventStepSucceeded, ToolName: "hmac.sign", Result: result})
		bus.Publish(string(plan.EventPlanDiff), plan.Event{Kind: plan.EventPlanDiff, Steps: []plan.Step{{ID: 1, ToolName: "hmac.sign", Args: secret, Result: result}}})
		return buf.String()
	}
	quiet := publish(false)
	if strings.Contains(quiet, "s3cr3t") || strings.Count(quiet, `"tool_name":"hmac.sign"`) != 3 {
		t.Fatalf("without --audit-args the log has arguments or results, or lost the events:\n%s", quiet)
	}
	if loud := publish(true); strings.Count(loud, "s3cr3t-arg") != 2 || strings.Count(loud, "s3cr3t-result") != 2 {
		t.Fatalf("with --audit-args the log lacks them:\n%s", loud)
	}
}
