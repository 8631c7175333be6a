package transport_test

import (
	"context"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolhost/toolhost/transport"
)

// A tool run as a task outlives its request: its latest progress note is
// the task's statusMessage on tasks/get (both revisions), the task's end
// message keeps it, and at 2025-11-25 the progress notifications still sent for
// the task's call name the task in _meta.
func TestTaskStatusFromGuestNotes(t *testing.T) {
	for _, rev := range []string{transport.Revision20251125, transport.Revision20260728} {
		t.Run(rev, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h := start(t)
				var mu sync.Mutex
				var notes []*mcp.ProgressNotificationClientRequest
				opts := &mcp.ClientOptions{ProgressNotificationHandler: func(_ context.Context, r *mcp.ProgressNotificationClientRequest) {
					mu.Lock()
					notes = append(notes, r)
					mu.Unlock()
				}}
				meta := mcp.Meta{"progressToken": "p1"}
				if rev == transport.Revision20260728 {
					caps := &mcp.ClientCapabilities{}
					caps.AddExtension(transport.ExtTasks, nil)
					opts.Capabilities = caps
				}
				cs := h.taskClient(t, rev, opts)
				id := startTask(t, cs, "block.wait", map[string]any{"notes": true}, meta)
				<-h.entered
				synctest.Wait() // the note's write to the task store
				if got := mustTask(t, cs, "tasks/get", id); got.Status != "working" || got.StatusMessage != "5 of 20 segments sieved" {
					t.Fatalf("tasks/get while the tool runs: %+v, want working with the guest's latest note", got)
				}
				h.release <- struct{}{}
				synctest.Wait()
				if got := mustTask(t, cs, "tasks/get", id); got.Status != "completed" || got.StatusMessage != "The call completed. The tool's last note: 5 of 20 segments sieved" {
					t.Fatalf("tasks/get after the end: %+v, want the end's message with the last note", got)
				}
				if rev != transport.Revision20251125 {
					return
				}
				mu.Lock()
				defer mu.Unlock()
				if len(notes) != 2 {
					t.Fatalf("%d progress notifications, want 2", len(notes))
				}
				for _, n := range notes {
					rel, _ := n.Params.Meta[transport.MetaRelatedTask].(map[string]any)
					if rel["taskId"] != id {
						t.Fatalf("progress %+v: _meta %v does not name the task", n.Params, n.Params.Meta)
					}
				}
			})
		})
	}
}
