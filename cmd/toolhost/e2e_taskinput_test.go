package main

import (
	"strings"
	"testing"

	"github.com/toolhost/toolhost/transport"
)

// TestWebDeleteAsksInTask: web.delete run as an MCP task, from the
// TypeScript SDK v2's ext-tasks client (conformance/clients/taskinput.mjs):
// the task asks the user (input_required: tasks/get's inputRequests and
// tasks/update at 2026-07-28, elicitation/create on tasks/result naming the
// task at 2025-11-25), resumes with the answer and completes; the DELETE
// goes out once, on the confirmation only.
func TestWebDeleteAsksInTask(t *testing.T) {
	dir := clientsDir(t)
	// web.delete (30 s) is offered as a task: a 2025-11-25 client runs it
	// as one by itself.
	w := webDeleteServer(t, "[dispatch]\ntask_offer_after = \"1s\"\n\n")
	srv, upURL, deletes := w.srv, w.upURL, w.deletes
	for _, version := range []string{transport.Revision20260728, transport.Revision20251125} {
		t.Run(version, func(t *testing.T) {
			var got struct {
				Results []struct {
					Asked                          int
					Message, Scope, Delivery, Kind string
					TaskID                         string
					IsError                        bool
					Structured                     struct{ Deleted bool }
				}
			}
			before := deletes.Load()
			runNode(t, dir, "taskinput.mjs", map[string]any{"url": srv.url, "revision": version, "tool": "web_delete",
				"args":    map[string]any{"url": upURL + "/items/7"},
				"answers": []any{map[string]any{"action": "decline"}, map[string]any{"action": "accept", "content": map[string]any{"confirm": true}}}}, &got)
			if len(got.Results) != 2 {
				t.Fatalf("results %+v", got.Results)
			}
			delivery := map[string]string{transport.Revision20260728: "task-update", transport.Revision20251125: "peer-request"}[version]
			for i, r := range got.Results {
				if r.Asked != 1 || r.Scope != "task" || r.Delivery != delivery || !strings.HasPrefix(r.TaskID, "task-") ||
					!strings.Contains(r.Message, "DELETE to") || r.Kind != "completed" || r.IsError || r.Structured.Deleted != (i == 1) {
					t.Errorf("answer %d: %+v; want asked once in the task's scope (%s), completed, deleted %v", i, r, delivery, i == 1)
				}
			}
			if sent := deletes.Load() - before; sent != 1 {
				t.Errorf("%d DELETEs sent for one confirmation", sent)
			}
		})
	}
}
