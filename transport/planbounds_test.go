package transport_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/toolhost/toolhost/plan"
	"github.com/toolhost/toolhost/transport"
)

// Finding 10.1, the response: the session result repeats the session's
// bytes (events, revisions, history), so one over the session limit
// leaves those copies out until it fits, and says so.
func TestPlanResultWithinSessionLimit(t *testing.T) {
	const limit = 3000
	cs, _ := planServer(t, &transport.PlanOptions{MaxSessionBytes: limit})
	text := strings.Repeat("word ", 60)
	var steps []string
	for i := 1; i <= 3; i++ {
		steps = append(steps, fmt.Sprintf(`{"id":%d,"tool_name":"text.count","args":{"text":"%d %s"}}`, i, i, text))
	}
	res, sr := callPlan(t, cs, `{"goal":"count","steps":[`+strings.Join(steps, ",")+`]}`)
	b, _ := json.Marshal(res.StructuredContent)
	if sr.Status != plan.StatusCompleted || len(sr.Events) != 0 || len(sr.History) != 3 {
		t.Fatalf("%s (%s): %d events, %d history; want the completed session without its event log", sr.Status, sr.Reason, len(sr.Events), len(sr.History))
	}
	if len(b) > limit || !strings.Contains(sr.Message, "left out") {
		t.Errorf("result of %d bytes (limit %d), message %q", len(b), limit, sr.Message)
	}
}
